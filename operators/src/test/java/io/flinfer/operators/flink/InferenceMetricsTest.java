package io.flinfer.operators.flink;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinfer.operators.engine.Engine;
import io.flinfer.operators.engine.EngineConfig;
import io.flinfer.operators.engine.Req;
import io.flinfer.operators.engine.SpeculativeConfig;
import io.flinfer.operators.engine.TokenEvent;
import io.flinfer.runtime.model.LlamaModel;
import io.flinfer.runtime.sampling.SamplingParams;
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
    public MetricGroup addGroup(String key, String value) {
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
      InferenceMetrics m = new InferenceMetrics(group, "stories260K", e.stats());
      int[] prompt = model.tokenizer().encode("Once upon a time", true);
      e.submit(Req.builder("a", prompt).maxNewTokens(5).ignoreEos(true).build());
      e.submit(Req.builder("b", prompt).maxNewTokens(5).ignoreEos(true).build());
      e.step();
      m.afterStep(e.stats());
      m.firstToken(12);
      assertThat(group.gauge("kv_total_tokens")).isEqualTo(512);
      assertThat((Integer) group.gauge("kv_used_tokens")).isPositive();
      assertThat((Double) group.gauge("kv_cache_usage_perc")).isBetween(0.0, 1.0).isPositive();
      assertThat(group.gauge("token_usage")).isEqualTo(group.gauge("kv_cache_usage_perc"));
      assertThat((Integer) group.gauge("batch_size")).isPositive();
      assertThat(((Counter) group.metrics.get("prompt_tokens_total")).getCount())
          .isEqualTo(e.stats().prefillTokens() + e.stats().cacheHitTokens());
      while (e.hasWork()) {
        e.step();
        m.afterStep(e.stats());
        m.nextToken(3);
      }
      m.finished(40);
      assertThat(((Counter) group.metrics.get("generation_tokens_total")).getCount())
          .isEqualTo(e.stats().decodeTokens());
      assertThat(group.gauge("num_running_reqs")).isEqualTo(0);
      assertThat((Double) group.gauge("cache_hit_rate")).isBetween(0.0, 1.0);
      assertThat(group.gauge("prefix_cache_queries"))
          .isEqualTo(((Counter) group.metrics.get("prompt_tokens_total")).getCount());
      assertThat(((Histogram) group.metrics.get("time_to_first_token_seconds")).getCount())
          .isEqualTo(1);
      // Latencies read in seconds: 12 ms is 0.012 s.
      assertThat(
              ((Histogram) group.metrics.get("time_to_first_token_seconds"))
                  .getStatistics()
                  .getQuantile(0.5))
          .isEqualTo(0.012);
      assertThat(
              ((Histogram) group.metrics.get("inter_token_latency_seconds"))
                  .getStatistics()
                  .getMean())
          .isEqualTo(0.003);
      assertThat(
              ((Histogram) group.metrics.get("e2e_request_latency_seconds"))
                  .getStatistics()
                  .getQuantile(0.99))
          .isEqualTo(0.04);
      assertThat(group.metrics)
          .containsKeys(
              "num_queue_reqs",
              "kv_evictable_tokens",
              "kv_protected_tokens",
              "num_retractions",
              "prefix_cache_hits",
              "prompt_tokens_per_second",
              "generation_tokens_per_second");
    }
  }

  @Test
  void generatedTokensCountWhatSpeculativeStepsAccepted() {
    LlamaModel model = SharedFiles.stories260k();
    Recording group = new Recording();
    int[] prompt = model.tokenizer().encode("Tom has a red ball", true);
    int ball = prompt[prompt.length - 1];
    EngineConfig config =
        EngineConfig.builder()
            .maxRunningRequests(4)
            .maxTotalTokens(512)
            .threads(1)
            .speculative(SpeculativeConfig.ngram(4))
            .build();
    try (Engine e = Engine.create(model, config)) {
      InferenceMetrics m = new InferenceMetrics(group, "stories260K", e.stats());
      // One token made the only likely one: its text repeats, and drafts of it hold.
      SamplingParams loop =
          SamplingParams.builder().logitBias(new int[] {ball}, new float[] {100f}).build();
      e.submit(Req.builder("a", prompt).params(loop).maxNewTokens(40).ignoreEos(true).build());
      int generated = 0;
      while (e.hasWork()) {
        for (TokenEvent t : e.step()) {
          generated += t.index() > 0 ? 1 : 0; // the first comes from the prefill step
        }
        m.afterStep(e.stats());
      }
      assertThat(((Counter) group.metrics.get("generation_tokens_total")).getCount())
          .isEqualTo(generated)
          .isEqualTo(39);
      assertThat((Long) group.gauge("spec_decode_num_draft_tokens_total")).isPositive();
      assertThat((Long) group.gauge("spec_decode_num_accepted_tokens_total")).isPositive();
      assertThat((Double) group.gauge("spec_decode_acceptance_rate")).isBetween(0.5, 1.0);
    }
  }
}
