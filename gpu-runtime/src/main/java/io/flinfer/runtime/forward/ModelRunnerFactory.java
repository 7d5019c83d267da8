package io.flinfer.runtime.forward;

import io.flinfer.memcache.KvPool;
import io.flinfer.memcache.ReqToTokenPool;
import io.flinfer.runtime.model.LlamaModel;

/** Builds a backend over given pools. */
@FunctionalInterface
public interface ModelRunnerFactory {
  ModelRunner create(LlamaModel model, KvPool kv, ReqToTokenPool reqToToken, int threads);
}
