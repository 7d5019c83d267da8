package io.flinfer.runtime.forward;

import io.flinfer.memcache.KvStoreType;
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
    return createWithKv(model, reqToToken, threads, size, null);
  }

  /**
   * Creates a runner and allocates {@code size} KV slots of {@code type} (null: the runner's
   * default), page size 1; a type the runner does not store is refused, naming the ones it does.
   */
  default ModelRunner createWithKv(
      LlamaModel model, ReqToTokenPool reqToToken, int threads, int size, KvStoreType type) {
    ModelRunner r = create(model, reqToToken, threads);
    try {
      KvStoreType kv = type != null ? type : r.kvStoreTypes().get(0);
      if (!r.kvStoreTypes().contains(kv)) {
        throw new IllegalArgumentException(
            "the " + r.backendName() + " backend stores KV as " + r.kvStoreTypes() + ", not " + kv);
      }
      r.allocateKv(size, 1, kv);
      return r;
    } catch (RuntimeException e) {
      r.close();
      throw e;
    }
  }
}
