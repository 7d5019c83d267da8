package io.flinfer.operators.flink;

import io.flinfer.operators.engine.EngineStats;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Histogram;
import org.apache.flink.metrics.MeterView;
import org.apache.flink.metrics.MetricGroup;

/**
 * The inference operator's metrics in Flink's metric system (the dashboard, and Prometheus through
 * Flink's reporter), per subtask, in a group {@code flinfer} with the model as a label. Where a
 * metric means what vLLM's or SGLang's does it has their name, so their dashboards read it: {@code
 * num_running_reqs}, {@code num_queue_reqs}, {@code token_usage} and {@code kv_cache_usage_perc}
 * (the KV pool's used share), {@code cache_hit_rate}, {@code prefix_cache_queries} and {@code
 * prefix_cache_hits} (prompt tokens), {@code prompt_tokens_total}, {@code generation_tokens_total},
 * the latency summaries {@code time_to_first_token_seconds}, {@code inter_token_latency_seconds}
 * and {@code e2e_request_latency_seconds}, and speculative decoding's {@code
 * spec_decode_num_draft_tokens_total} and {@code spec_decode_num_accepted_tokens_total}. Owns a
 * snapshot of the engine's statistics, refreshed after every step.
 */
public final class InferenceMetrics {
  private final Counter promptTokens;
  private final Counter cacheHits;
  private final Counter generatedTokens;
  private final Counter computedPrefill;
  private final Histogram timeToFirstToken;
  private final Histogram interTokenLatency;
  private final Histogram e2eLatency;
  private volatile EngineStats last;

  public InferenceMetrics(MetricGroup parent, String model, EngineStats initial) {
    this.last = initial;
    MetricGroup g = parent.addGroup("flinfer").addGroup("model", model);
    g.gauge("num_running_reqs", () -> last.runningRequests());
    g.gauge("num_queue_reqs", () -> last.waitingRequests());
    g.gauge("token_usage", this::kvUsage);
    g.gauge("kv_cache_usage_perc", this::kvUsage);
    g.gauge("kv_used_tokens", () -> last.kvUsedTokens());
    g.gauge("kv_total_tokens", () -> last.kvTotalTokens());
    g.gauge("kv_evictable_tokens", () -> last.kvEvictableTokens());
    g.gauge("kv_protected_tokens", () -> last.kvProtectedTokens());
    g.gauge("cache_hit_rate", this::cacheHitRate);
    g.gauge("num_retractions", () -> last.retractions());
    g.gauge("batch_size", () -> last.lastBatchSize());
    g.gauge("kv_free_tokens", () -> last.kvFreeTokens());
    g.gauge("memory_pressure", () -> last.pressure().name().toLowerCase(java.util.Locale.ROOT));
    g.gauge("host_total_tokens", () -> last.tiers().hostTotalTokens());
    g.gauge("host_used_tokens", () -> last.tiers().hostUsedTokens());
    g.gauge("host_only_tokens", () -> last.tiers().hostOnlyTokens());
    g.gauge("storage_pages", () -> last.tiers().storagePages());
    g.gauge("storage_tokens", () -> last.tiers().storageTokens());
    g.gauge("host_hit_tokens_total", () -> last.tiers().hostHitTokens());
    g.gauge("storage_hit_tokens_total", () -> last.tiers().storageHitTokens());
    g.gauge("load_back_bytes_total", () -> last.tiers().loadBackBytes());
    g.gauge("load_back_seconds_total", () -> last.tiers().loadBackNanos() / 1e9);
    g.gauge("write_back_bytes_total", () -> last.tiers().writeBackBytes());
    g.gauge("write_back_seconds_total", () -> last.tiers().writeBackNanos() / 1e9);
    g.gauge("storage_read_bytes_total", () -> last.tiers().storageReadBytes());
    g.gauge("storage_written_bytes_total", () -> last.tiers().storageWrittenBytes());
    g.gauge("storage_corrupt_pages_total", () -> last.tiers().storageCorruptPages());
    g.gauge("spec_decode_num_draft_tokens_total", () -> last.draftTokens());
    g.gauge("spec_decode_num_accepted_tokens_total", () -> last.acceptedDraftTokens());
    g.gauge("spec_decode_acceptance_rate", () -> last.draftAcceptanceRate());
    computedPrefill = g.counter("prefill_tokens_computed_total");
    cacheHits = g.counter("prefix_cache_hits");
    promptTokens = g.counter("prompt_tokens_total");
    // Every prompt token admitted was looked up in the prefix cache.
    g.gauge("prefix_cache_queries", promptTokens::getCount);
    generatedTokens = g.counter("generation_tokens_total");
    g.meter("prompt_tokens_per_second", new MeterView(promptTokens));
    g.meter("generation_tokens_per_second", new MeterView(generatedTokens));
    timeToFirstToken = g.histogram("time_to_first_token_seconds", new SecondsHistogram(1000));
    interTokenLatency = g.histogram("inter_token_latency_seconds", new SecondsHistogram(1000));
    e2eLatency = g.histogram("e2e_request_latency_seconds", new SecondsHistogram(1000));
  }

  /** The KV pool's used share, 0 to 1. */
  double kvUsage() {
    return last.kvTotalTokens() == 0 ? 0 : (double) last.kvUsedTokens() / last.kvTotalTokens();
  }

  /** Prompt tokens served from the cache, of all prompt tokens admitted. */
  double cacheHitRate() {
    long hits = last.cacheHitTokens();
    long all = hits + last.prefillTokens();
    return all == 0 ? 0 : (double) hits / all;
  }

  public void afterStep(EngineStats now) {
    long computed = now.prefillTokens() - last.prefillTokens();
    long hits = now.cacheHitTokens() - last.cacheHitTokens();
    computedPrefill.inc(computed);
    cacheHits.inc(hits);
    promptTokens.inc(computed + hits);
    // A decode step computes each draft token and generates those accepted.
    generatedTokens.inc(
        now.decodeTokens()
            - last.decodeTokens()
            - (now.draftTokens() - last.draftTokens())
            + (now.acceptedDraftTokens() - last.acceptedDraftTokens()));
    last = now;
  }

  public void firstToken(long millis) {
    timeToFirstToken.update(millis * 1000);
  }

  public void nextToken(long millis) {
    interTokenLatency.update(millis * 1000);
  }

  /** A request's whole time in its engine, from entering it to its last token. */
  public void finished(long millis) {
    e2eLatency.update(millis * 1000);
  }
}
