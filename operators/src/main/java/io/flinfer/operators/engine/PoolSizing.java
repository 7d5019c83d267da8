package io.flinfer.operators.engine;

import io.flinfer.memcache.KvCacheSizing;
import io.flinfer.memcache.KvPool;
import io.flinfer.memcache.KvStoreType;
import io.flinfer.runtime.forward.DeviceMemory;
import io.flinfer.runtime.model.ModelConfig;
import java.util.List;
import java.util.function.Supplier;

/** How many KV tokens an engine's pool holds. */
final class PoolSizing {
  private PoolSizing() {}

  /**
   * As configured, else sized from the backend's memory ({@code memory}, measured after its
   * weights, and only then: measuring may cost a collection) by the {@code mem_fraction_static}
   * rule, never more than the running requests can use, in whole pages. Sizing warnings go to
   * {@code warnings}.
   */
  static int poolTokens(
      ModelConfig c,
      EngineConfig cfg,
      KvStoreType type,
      Supplier<DeviceMemory> memory,
      double defaultFraction,
      List<String> warnings) {
    long useful = (long) cfg.maxRunningRequests() * c.contextLength();
    int tokens = cfg.maxTotalTokens();
    if (tokens == 0) {
      long cell = KvPool.cellSizeBytes(c.layers(), c.kvHeads(), c.headDim(), type.bytes());
      DeviceMemory measured = memory.get();
      KvCacheSizing sizing =
          KvCacheSizing.compute(
              new KvCacheSizing.Inputs(
                  measured.totalBytes(),
                  measured.freeBytes(),
                  cfg.memFractionStatic() > 0 ? cfg.memFractionStatic() : defaultFraction,
                  cell,
                  cfg.pageSize(),
                  c.contextLength(),
                  0,
                  cfg.maxRunningRequests()));
      warnings.addAll(sizing.warnings());
      tokens = (int) Math.min(sizing.maxTotalTokens(), useful);
    }
    tokens = tokens / cfg.pageSize() * cfg.pageSize();
    if (tokens < cfg.pageSize()) {
      throw new IllegalArgumentException(
          "the KV pool must hold at least one page of " + cfg.pageSize() + " tokens");
    }
    return tokens;
  }
}
