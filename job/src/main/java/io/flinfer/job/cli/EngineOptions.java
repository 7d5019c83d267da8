package io.flinfer.job.cli;

import io.flinfer.job.model.ModelLocator;
import io.flinfer.job.pipeline.PipelineSettings;
import io.flinfer.memcache.KvStoreType;
import io.flinfer.memcache.tier.HiCacheConfig;
import io.flinfer.memcache.tier.WritePolicy;
import io.flinfer.operators.engine.EngineConfig;
import io.flinfer.operators.engine.SchedulePolicy;
import io.flinfer.operators.engine.SpeculativeConfig;
import io.flinfer.runtime.forward.ModelRunners;
import java.util.Locale;
import picocli.CommandLine.Option;

/**
 * How each inference subtask serves, shared by the live job, the replay and the embedded run: every
 * setting of the engine, with SGLang's names where it has one.
 */
final class EngineOptions {
  @Option(
      names = "--max-running-requests",
      defaultValue = "32",
      description = "Per inference subtask (default: ${DEFAULT-VALUE}).")
  int maxRunningRequests;

  @Option(
      names = "--max-total-tokens",
      defaultValue = "0",
      description =
          "KV pool tokens per inference subtask; 0 sizes the pool from the memory the backend has"
              + " after its weights, by --mem-fraction-static (default: ${DEFAULT-VALUE}).")
  int maxTotalTokens;

  @Option(
      names = "--mem-fraction-static",
      defaultValue = "0",
      description =
          "Share of the backend's memory that weights and the KV pool may take; 0: the backend's"
              + " default, 0.5 of the JVM's heap on the CPU, 0.85 of a GPU's (default:"
              + " ${DEFAULT-VALUE}).")
  double memFractionStatic;

  @Option(
      names = "--page-size",
      defaultValue = "1",
      description = "KV tokens per page (default: ${DEFAULT-VALUE}).")
  int pageSize;

  @Option(
      names = "--kv-store-type",
      defaultValue = "auto",
      description =
          "How KV values are stored: fp32, fp16, bf16, fp8-e4m3, fp8-e5m2 (8-bit floats), or"
              + " auto, the backend's choice (fp32 on the CPU, the weights' 16-bit type on CUDA,"
              + " which holds that type or FP8) (default: ${DEFAULT-VALUE}).")
  String kvStoreType;

  @Option(
      names = "--schedule-policy",
      defaultValue = "lpm",
      description =
          "Order of the waiting queue: lpm (longest cached prefix first), fcfs, or dfs-weight"
              + " (default: ${DEFAULT-VALUE}).")
  String schedulePolicy;

  @Option(
      names = "--radix-cache",
      negatable = true,
      defaultValue = "true",
      fallbackValue = "true",
      description = "Share cached prefixes between requests (default: on; --no-radix-cache).")
  boolean radixCache;

  @Option(
      names = "--mixed-chunk",
      negatable = true,
      defaultValue = "true",
      fallbackValue = "true",
      description =
          "A prefill step also decodes the running requests (default: on; --no-mixed-chunk).")
  boolean mixedChunk;

  @Option(
      names = "--chunked-prefill-size",
      defaultValue = "512",
      description =
          "Longest prefill chunk of one request per step; 0: off (default: ${DEFAULT-VALUE}).")
  int chunkedPrefillSize;

  @Option(
      names = "--max-prefill-tokens",
      defaultValue = "4096",
      description = "Prompt tokens one prefill step takes at most (default: ${DEFAULT-VALUE}).")
  int maxPrefillTokens;

  @Option(
      names = "--engine-threads",
      defaultValue = "1",
      description =
          "Worker threads of each engine; size them from the task slots sharing a machine (default: ${DEFAULT-VALUE}).")
  int engineThreads;

  @Option(
      names = "--backend",
      defaultValue = "auto",
      description = "cpu, cuda, cuda:N or auto (default: ${DEFAULT-VALUE}).")
  String backend;

  @Option(
      names = "--stream-interval-ms",
      defaultValue = "10",
      description =
          "At most how often a request's tokens are sent on to the chunks topic, together; its first token and its end go at once; 0: every token at once (default: ${DEFAULT-VALUE}).")
  long streamIntervalMs;

  @Option(
      names = "--checkpoint-interval-ms",
      defaultValue = "1000",
      description = "Completions are committed on checkpoints (default: ${DEFAULT-VALUE}).")
  long checkpointIntervalMs;

  @Option(
      names = "--hicache-ratio",
      defaultValue = "0",
      description =
          "A host KV tier under the radix cache, this many times the KV pool's tokens; 0: none unless --hicache-size (default: ${DEFAULT-VALUE}).")
  double hicacheRatio;

  @Option(
      names = "--hicache-size",
      defaultValue = "0",
      description = "A host KV tier of this many tokens (instead of --hicache-ratio).")
  int hicacheSize;

  @Option(
      names = "--hicache-write-policy",
      defaultValue = "write-through",
      description =
          "When KV is copied to the host tier: write-through, write-through-selective, write-back (default: ${DEFAULT-VALUE}).")
  String hicacheWritePolicy;

  @Option(
      names = "--hicache-write-threshold",
      defaultValue = "2",
      description =
          "Hits before write-through-selective copies a prefix to the host (default: ${DEFAULT-VALUE}).")
  int hicacheWriteThreshold;

  @Option(
      names = "--hicache-storage-dir",
      description =
          "A storage KV tier in this directory, kept across restarts (needs a host tier).")
  java.nio.file.Path hicacheStorageDir;

  @Option(
      names = "--hicache-storage-gb",
      defaultValue = "16",
      description = "The storage tier's size limit in GiB (default: ${DEFAULT-VALUE}).")
  double hicacheStorageGb;

  @Option(
      names = "--hicache-storage-page-tokens",
      defaultValue = "16",
      description =
          "Tokens per storage page, a multiple of --page-size (default: ${DEFAULT-VALUE}).")
  int hicacheStoragePageTokens;

  @Option(
      names = "--speculative-num-draft-tokens",
      defaultValue = "0",
      description =
          "Speculative decoding by n-gram lookup: draft up to this many tokens a decode step from"
              + " the request's own earlier text, and verify them in the step; outputs are the"
              + " same, bit for bit; 0: off (default: ${DEFAULT-VALUE}).")
  int speculativeDraftTokens;

  @Option(
      names = "--speculative-ngram-min-match-window-size",
      defaultValue = "1",
      description = "Shortest suffix a draft is looked up by (default: ${DEFAULT-VALUE}).")
  int speculativeMinWindow;

  @Option(
      names = "--speculative-ngram-max-match-window-size",
      defaultValue = "4",
      description = "Longest suffix a draft is looked up by (default: ${DEFAULT-VALUE}).")
  int speculativeMaxWindow;

  @Option(
      names = "--speculative-disable-by-batch-size",
      defaultValue = "8",
      description =
          "Steps with more running requests than this do not speculate (default: ${DEFAULT-VALUE}).")
  int speculativeMaxBatch;

  /** Speculative decoding as the options ask for it; null for none. */
  SpeculativeConfig speculativeConfig() {
    if (speculativeDraftTokens < 0) {
      throw new IllegalArgumentException("--speculative-num-draft-tokens must be 0 or more");
    }
    return speculativeDraftTokens == 0
        ? null
        : new SpeculativeConfig(
            speculativeDraftTokens,
            speculativeMinWindow,
            speculativeMaxWindow,
            speculativeMaxBatch);
  }

  /** The host and storage tiers the options ask for; null for none. */
  HiCacheConfig hiCacheConfig() {
    if (hicacheRatio <= 0 && hicacheSize <= 0) {
      if (hicacheStorageDir != null) {
        throw new IllegalArgumentException(
            "--hicache-storage-dir needs a host tier (--hicache-ratio or --hicache-size)");
      }
      return null;
    }
    return HiCacheConfig.builder()
        .hostTokens(Math.max(0, hicacheSize))
        .hostRatio(hicacheSize > 0 ? 0 : hicacheRatio)
        .writePolicy(
            parse(
                WritePolicy.class, "--hicache-write-policy", hicacheWritePolicy.replace('-', '_')))
        .writeThroughThreshold(hicacheWriteThreshold)
        .storageDir(hicacheStorageDir)
        .storageBytes((long) (hicacheStorageGb * (1L << 30)))
        .storagePageTokens(hicacheStoragePageTokens)
        .build();
  }

  /**
   * The engine settings, validated; an invalid one (or a backend that cannot run here) is an {@link
   * IllegalArgumentException} whose message names it, before anything starts.
   */
  EngineConfig engineConfig() {
    KvStoreType kv =
        "auto".equals(kvStoreType)
            ? null
            : parse(KvStoreType.class, "--kv-store-type", kvStoreType.replace('-', '_'));
    SchedulePolicy policy =
        parse(SchedulePolicy.class, "--schedule-policy", schedulePolicy.replace('-', '_'));
    return EngineConfig.builder()
        .maxRunningRequests(maxRunningRequests)
        .maxTotalTokens(maxTotalTokens)
        .memFractionStatic(memFractionStatic)
        .pageSize(pageSize)
        .kvStoreType(kv)
        .schedulePolicy(policy)
        .radixCache(radixCache)
        .mixedChunk(mixedChunk)
        .chunkedPrefillSize(chunkedPrefillSize)
        .maxPrefillTokens(maxPrefillTokens)
        .threads(engineThreads)
        .hiCache(hiCacheConfig())
        .speculative(speculativeConfig())
        .build();
  }

  /** Checks the backend where the command runs: an unknown or unavailable one fails now. */
  void checkBackend() {
    ModelRunners.byName(backend);
  }

  /**
   * The constant of {@code type} that {@code value} names, in any case; an unknown one is an {@link
   * IllegalArgumentException} naming the option and the known values.
   */
  static <E extends Enum<E>> E parse(Class<E> type, String option, String value) {
    try {
      return Enum.valueOf(type, value.toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      StringBuilder known = new StringBuilder();
      for (E c : type.getEnumConstants()) {
        known
            .append(known.length() == 0 ? "" : ", ")
            .append(c.name().toLowerCase(Locale.ROOT).replace('_', '-'));
      }
      throw new IllegalArgumentException(
          option + " must be one of " + known + ", not '" + value + "'");
    }
  }

  /** Sets the model of {@code where} and these options on {@code b}. */
  PipelineSettings.Builder apply(PipelineSettings.Builder b, ModelLocator.Location where) {
    if (checkpointIntervalMs < 10) {
      throw new IllegalArgumentException(
          "--checkpoint-interval-ms must be at least 10 (completions commit on checkpoints)");
    }
    if (streamIntervalMs < 0) {
      throw new IllegalArgumentException("--stream-interval-ms must be 0 or more");
    }
    return b.model(JobOptions.modelSource(where), where.model().getFileName().toString())
        .engine(engineConfig(), backend)
        .streamIntervalMillis(streamIntervalMs)
        .checkpointIntervalMillis(checkpointIntervalMs);
  }
}
