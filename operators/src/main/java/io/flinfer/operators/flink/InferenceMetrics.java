package io.flinfer.operators.flink;

import io.flinfer.operators.engine.EngineStats;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Histogram;
import org.apache.flink.metrics.MeterView;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.runtime.metrics.DescriptiveStatisticsHistogram;

/**
 * The inference operator's metrics in Flink's metric system (so the dashboard and any reporter show
 * them), per subtask: requests running and waiting, KV pool tokens used, total, evictable and
 * protected, cache hit rate, retractions, prefill and decode tokens per second, batch size, and
 * histograms of time to first token and inter-token latency. Owns a snapshot of the engine's
 * statistics, refreshed after every step.
 */
public final class InferenceMetrics {
  private final Counter prefillTokens;
  private final Counter decodeTokens;
  private final Histogram timeToFirstToken;
  private final Histogram interTokenLatency;
  private volatile EngineStats last;

  public InferenceMetrics(MetricGroup parent, EngineStats initial) {
    this.last = initial;
    MetricGroup g = parent.addGroup("flinfer");
    g.gauge("runningRequests", () -> last.runningRequests());
    g.gauge("waitingRequests", () -> last.waitingRequests());
    g.gauge("kvUsedTokens", () -> last.kvUsedTokens());
    g.gauge("kvTotalTokens", () -> last.kvTotalTokens());
    g.gauge("kvEvictableTokens", () -> last.kvEvictableTokens());
    g.gauge("kvProtectedTokens", () -> last.kvProtectedTokens());
    g.gauge("cacheHitRate", this::cacheHitRate);
    g.gauge("retractions", () -> last.retractions());
    g.gauge("batchSize", () -> last.lastBatchSize());
    prefillTokens = g.counter("prefillTokens");
    decodeTokens = g.counter("decodeTokens");
    g.meter("prefillTokensPerSecond", new MeterView(prefillTokens));
    g.meter("decodeTokensPerSecond", new MeterView(decodeTokens));
    timeToFirstToken = g.histogram("timeToFirstTokenMs", new DescriptiveStatisticsHistogram(1000));
    interTokenLatency =
        g.histogram("interTokenLatencyMs", new DescriptiveStatisticsHistogram(1000));
  }

  /** Prompt tokens served from the cache, of all prompt tokens admitted. */
  double cacheHitRate() {
    long hits = last.cacheHitTokens();
    long all = hits + last.prefillTokens();
    return all == 0 ? 0 : (double) hits / all;
  }

  public void afterStep(EngineStats now) {
    prefillTokens.inc(now.prefillTokens() - last.prefillTokens());
    decodeTokens.inc(now.decodeTokens() - last.decodeTokens());
    last = now;
  }

  public void firstToken(long millis) {
    timeToFirstToken.update(millis);
  }

  public void nextToken(long millis) {
    interTokenLatency.update(millis);
  }
}
