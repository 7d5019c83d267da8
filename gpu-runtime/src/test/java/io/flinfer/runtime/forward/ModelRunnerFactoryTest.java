package io.flinfer.runtime.forward;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flinfer.memcache.KvStoreType;
import io.flinfer.memcache.ReqToTokenPool;
import io.flinfer.runtime.model.LlamaModel;
import io.flinfer.runtime.testing.SharedFiles;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A runner made with a KV store type allocates its pool in that type, null meaning the runner's
 * default; a type the runner does not store is refused by name, and the runner is closed.
 */
class ModelRunnerFactoryTest {
  @Test
  void allocatesTheRequestedStoreTypeOrTheDefault() {
    LlamaModel model = SharedFiles.stories260k();
    ModelRunnerFactory cpu = CpuModelRunner::new;
    for (KvStoreType type : KvStoreType.values()) {
      try (ModelRunner r = cpu.createWithKv(model, new ReqToTokenPool(1, 8), 1, 8, type)) {
        assertThat(((CpuModelRunner) r).kvPool().storeType()).isEqualTo(type);
      }
    }
    try (ModelRunner r = cpu.createWithKv(model, new ReqToTokenPool(1, 8), 1, 8)) {
      assertThat(((CpuModelRunner) r).kvPool().storeType()).isEqualTo(r.kvStoreTypes().get(0));
    }
  }

  @Test
  void refusesATypeTheRunnerDoesNotStore() {
    LlamaModel model = SharedFiles.stories260k();
    boolean[] closed = new boolean[1];
    ModelRunnerFactory fp32Only =
        (m, pool, threads) ->
            new ForwardingModelRunner(new CpuModelRunner(m, pool, threads)) {
              @Override
              public List<KvStoreType> kvStoreTypes() {
                return List.of(KvStoreType.FP32);
              }

              @Override
              public void close() {
                closed[0] = true;
                super.close();
              }
            };
    assertThatThrownBy(
            () -> fp32Only.createWithKv(model, new ReqToTokenPool(1, 8), 1, 8, KvStoreType.FP16))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("FP16")
        .hasMessageContaining("[FP32]");
    assertThat(closed[0]).isTrue();
  }
}
