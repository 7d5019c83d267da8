package io.flinfer.runtime.forward;

import io.flinfer.memcache.ReqToTokenPool;
import io.flinfer.runtime.model.LlamaModel;

/**
 * Builds a backend for a model over the request-to-token table its caller keeps; the backend then
 * allocates its own KV storage ({@link ModelRunner#allocateKv}).
 */
@FunctionalInterface
public interface ModelRunnerFactory {
  ModelRunner create(LlamaModel model, ReqToTokenPool reqToToken, int threads);

  /** Creates a runner and allocates {@code size} KV slots of its default type, page size 1. */
  default ModelRunner createWithKv(
      LlamaModel model, ReqToTokenPool reqToToken, int threads, int size) {
    ModelRunner r = create(model, reqToToken, threads);
    try {
      r.allocateKv(size, 1, r.kvStoreTypes().get(0));
      return r;
    } catch (RuntimeException e) {
      r.close();
      throw e;
    }
  }
}
