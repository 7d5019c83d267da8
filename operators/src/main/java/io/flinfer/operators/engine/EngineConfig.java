package io.flinfer.operators.engine;

import io.flinfer.memcache.KvStoreType;
import io.flinfer.memcache.tier.HiCacheConfig;
import java.io.Serializable;

/**
 * The engine's settings. Immutable; build with {@link #builder()}, which validates. Zero for {@code
 * maxTotalTokens} means: size the KV pool from memory ({@code memFractionStatic}); a null {@code
 * kvStoreType}, the backend's default (fp32 on the CPU, the weights' 16-bit type on CUDA). With
 * {@code mixedChunk} (SGLang's {@code enable_mixed_chunk}) a prefill step also decodes the running
 * requests, so arrivals do not stall them for a step. A non-null {@code hiCache} puts host (and
 * storage) tiers under the radix cache; a non-null {@code speculative} drafts tokens by n-gram
 * lookup and verifies them, which changes how many steps an output takes and nothing of the output.
 */
public record EngineConfig(
    int maxRunningRequests,
    int maxTotalTokens,
    double memFractionStatic,
    int pageSize,
    int chunkedPrefillSize,
    int maxPrefillTokens,
    SchedulePolicy schedulePolicy,
    boolean radixCache,
    boolean mixedChunk,
    int waitingQueueCapacity,
    KvStoreType kvStoreType,
    int threads,
    double initNewTokenRatio,
    double minNewTokenRatio,
    int newTokenRatioDecaySteps,
    HiCacheConfig hiCache,
    SpeculativeConfig speculative)
    implements Serializable {

  public static Builder builder() {
    return new Builder();
  }

  /** Validating builder with serving defaults. */
  public static final class Builder {
    private int maxRunningRequests = 64;
    private int maxTotalTokens = 0;
    private double memFractionStatic = 0;
    private int pageSize = 1;
    private int chunkedPrefillSize = 512;
    private int maxPrefillTokens = 4096;
    private SchedulePolicy schedulePolicy = SchedulePolicy.LPM;
    private boolean radixCache = true;
    private boolean mixedChunk = true;
    private int waitingQueueCapacity = 1024;
    private KvStoreType kvStoreType = null;
    private int threads = Runtime.getRuntime().availableProcessors();
    private double initNewTokenRatio = 0.7;
    private double minNewTokenRatio = 0.1;
    private int newTokenRatioDecaySteps = 600;
    private HiCacheConfig hiCache;
    private SpeculativeConfig speculative;

    public Builder maxRunningRequests(int v) {
      maxRunningRequests = v;
      return this;
    }

    public Builder maxTotalTokens(int v) {
      maxTotalTokens = v;
      return this;
    }

    /** 0: the backend's default (0.5 on the CPU, 0.85 on CUDA). */
    public Builder memFractionStatic(double v) {
      memFractionStatic = v;
      return this;
    }

    public Builder pageSize(int v) {
      pageSize = v;
      return this;
    }

    /** Longest extend of one chunked request per step; 0 turns chunking off. */
    public Builder chunkedPrefillSize(int v) {
      chunkedPrefillSize = v;
      return this;
    }

    public Builder maxPrefillTokens(int v) {
      maxPrefillTokens = v;
      return this;
    }

    public Builder schedulePolicy(SchedulePolicy v) {
      schedulePolicy = v;
      return this;
    }

    public Builder radixCache(boolean v) {
      radixCache = v;
      return this;
    }

    public Builder mixedChunk(boolean v) {
      mixedChunk = v;
      return this;
    }

    public Builder waitingQueueCapacity(int v) {
      waitingQueueCapacity = v;
      return this;
    }

    /** Null: the backend's default. */
    public Builder kvStoreType(KvStoreType v) {
      kvStoreType = v;
      return this;
    }

    public Builder threads(int v) {
      threads = v;
      return this;
    }

    public Builder initNewTokenRatio(double v) {
      initNewTokenRatio = v;
      return this;
    }

    public Builder minNewTokenRatio(double v) {
      minNewTokenRatio = v;
      return this;
    }

    public Builder newTokenRatioDecaySteps(int v) {
      newTokenRatioDecaySteps = v;
      return this;
    }

    /** Host and storage tiers under the radix cache; null (the default) for the pool alone. */
    public Builder hiCache(HiCacheConfig v) {
      hiCache = v;
      return this;
    }

    /** Speculative decoding by n-gram lookup; null (the default) for none. */
    public Builder speculative(SpeculativeConfig v) {
      speculative = v;
      return this;
    }

    public EngineConfig build() {
      check(maxRunningRequests >= 1, "max_running_requests must be >= 1");
      check(maxTotalTokens >= 0, "max_total_tokens must be >= 0 (0 = size from memory)");
      check(
          memFractionStatic >= 0 && memFractionStatic <= 1,
          "mem_fraction_static must be in (0, 1], or 0 for the backend's default");
      check(pageSize >= 1, "page_size must be >= 1");
      check(
          chunkedPrefillSize == 0 || chunkedPrefillSize >= pageSize,
          "chunked_prefill_size must be 0 (off) or at least one page");
      check(maxPrefillTokens >= 1, "max_prefill_tokens must be >= 1");
      check(waitingQueueCapacity >= 1, "waiting queue capacity must be >= 1");
      check(threads >= 1, "threads must be >= 1");
      check(
          minNewTokenRatio > 0 && minNewTokenRatio <= initNewTokenRatio && initNewTokenRatio <= 1,
          "need 0 < min_new_token_ratio <= init_new_token_ratio <= 1");
      check(newTokenRatioDecaySteps >= 1, "new token ratio decay steps must be >= 1");
      check(hiCache == null || radixCache, "the host and storage tiers need the radix cache");
      return new EngineConfig(
          maxRunningRequests,
          maxTotalTokens,
          memFractionStatic,
          pageSize,
          chunkedPrefillSize,
          maxPrefillTokens,
          schedulePolicy,
          radixCache,
          mixedChunk,
          waitingQueueCapacity,
          kvStoreType,
          threads,
          initNewTokenRatio,
          minNewTokenRatio,
          newTokenRatioDecaySteps,
          hiCache,
          speculative);
    }

    private static void check(boolean ok, String message) {
      if (!ok) {
        throw new IllegalArgumentException(message);
      }
    }
  }
}
