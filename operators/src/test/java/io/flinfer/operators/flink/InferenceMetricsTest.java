package io.flinfer.operators.flink;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinfer.operators.engine.Engine;
import io.flinfer.operators.engine.EngineConfig;
import io.flinfer.operators.engine.Req;
import io.flinfer.runtime.model.LlamaModel;
import io.flinfer.runtime.testing.SharedFiles;
import java.util.HashMap;
import java.util.Map;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.Histogram;
import org.apache.flink.metrics.Meter;
import org.apache.flink.metrics.Metric;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.metrics.SimpleCounter;
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;
import org.junit.jupiter.api.Test;

/** The inference metrics follow the engine's statistics. */
class InferenceMetricsTest {
  /** Keeps what is registered, by name. */
  static final class Recording extends UnregisteredMetricsGroup {
    final Map<String, Metric> metrics = new HashMap<>();

    @Override
    public MetricGroup addGroup(String name) {
      return this;
    }

    @Override
    public <T, G extends Gauge<T>> G gauge(String name, G gauge) {
      metrics.put(name, gauge);
      return gauge;
    }

    @Override
    public <C extends Counter> C counter(String name, C counter) {
      metrics.put(name, counter);
      return counter;
    }

    @Override
    public Counter counter(String name) {
      return counter(name, new SimpleCounter());
    }

    @Override
    public <M extends Meter> M meter(String name, M meter) {
      metrics.put(name, meter);
      return meter;
    }

    @Override
    public <H extends Histogram> H histogram(String name, H histogram) {
      metrics.put(name, histogram);
      return histogram;
    }

    Object gauge(String name) {
      return ((Gauge<?>) metrics.get(name)).getValue();
    }
  }

  @Test
  void gaugesCountersAndHistogramsTrackTheEngine() {
    LlamaModel model = SharedFiles.stories260k();
    Recording group = new Recording();
    try (Engine e =
        Engine.create(
            model,
            EngineConfig.builder().maxRunningRequests(4).maxTotalTokens(512).threads(1).build())) {
      InferenceMetrics m = new InferenceMetrics(group, e.stats());
      int[] prompt = model.tokenizer().encode("Once upon a time", true);
      e.submit(Req.builder("a", prompt).maxNewTokens(5).ignoreEos(true).build());
      e.submit(Req.builder("b", prompt).maxNewTokens(5).ignoreEos(true).build());
      e.step();
      m.afterStep(e.stats());
      m.firstToken(12);
      assertThat(group.gauge("kvTotalTokens")).isEqualTo(512);
      assertThat((Integer) group.gauge("kvUsedTokens")).isPositive();
      assertThat((Integer) group.gauge("batchSize")).isPositive();
      assertThat(((Counter) group.metrics.get("prefillTokens")).getCount())
          .isEqualTo(e.stats().prefillTokens());
      while (e.hasWork()) {
        e.step();
        m.afterStep(e.stats());
        m.nextToken(3);
      }
      assertThat(((Counter) group.metrics.get("decodeTokens")).getCount())
          .isEqualTo(e.stats().decodeTokens());
      assertThat(group.gauge("runningRequests")).isEqualTo(0);
      assertThat((Double) group.gauge("cacheHitRate")).isBetween(0.0, 1.0);
      assertThat(((Histogram) group.metrics.get("timeToFirstTokenMs")).getCount()).isEqualTo(1);
      assertThat(((Histogram) group.metrics.get("interTokenLatencyMs")).getStatistics().getMax())
          .isEqualTo(3);
      assertThat(group.metrics)
          .containsKeys(
              "waitingRequests",
              "kvEvictableTokens",
              "kvProtectedTokens",
              "retractions",
              "prefillTokensPerSecond",
              "decodeTokensPerSecond");
    }
  }
}
