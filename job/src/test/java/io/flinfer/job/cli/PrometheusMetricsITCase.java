package io.flinfer.job.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinfer.runtime.testing.SharedFiles;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.DoublePredicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * During {@code flinfer run}, Prometheus's scrape of {@code /metrics} returns the inference metrics
 * under the names vLLM and SGLang dashboards use, labelled with model and subtask, and their values
 * move as requests complete.
 */
class PrometheusMetricsITCase {
  private static final HttpClient HTTP = HttpClient.newHttpClient();

  @TempDir Path dir;

  @Test
  @Timeout(240)
  void theInferenceMetricsMoveAsRequestsComplete() throws Exception {
    int port = BackgroundRun.freePort();
    String url = "http://127.0.0.1:" + port + "/metrics";
    BackgroundRun run =
        new BackgroundRun(
            "--model",
            SharedFiles.stories260kDir().toString(),
            "--max-new-tokens",
            "16",
            "--gateway-port",
            "0",
            "--metrics-port",
            String.valueOf(port),
            "--web-port",
            "0",
            "--kafka-port",
            "0",
            "--data-dir",
            dir.resolve("data").toString(),
            "--backend",
            "cpu",
            // Drafts change no output; their series move.
            "--speculative-num-draft-tokens",
            "4");
    try {
      run.send("Once upon a time");
      String first = awaitMetric(url, "e2e_request_latency_seconds_count", v -> v >= 1, run);
      double generated = value(first, "generation_tokens_total");
      assertThat(generated).isPositive();
      assertThat(value(first, "prompt_tokens_total")).isPositive();
      assertThat(value(first, "time_to_first_token_seconds_count")).isEqualTo(1);
      for (String name :
          new String[] {
            "num_running_reqs",
            "num_queue_reqs",
            "token_usage",
            "kv_cache_usage_perc",
            "cache_hit_rate",
            "prefix_cache_queries",
            "prefix_cache_hits",
            "inter_token_latency_seconds_count"
          }) {
        assertThat(series(first, name)).as(name).isNotNull();
      }
      // Labels a dashboard groups by: the model and the subtask.
      assertThat(series(first, "generation_tokens_total"))
          .contains("model=\"stories260K")
          .contains("subtask_index=\"0\"");

      run.send("Lily and Ben");
      run.send("Once upon a time there was");
      String later = awaitMetric(url, "e2e_request_latency_seconds_count", v -> v >= 3, run);
      assertThat(value(later, "generation_tokens_total")).isGreaterThan(generated);
      // The same first prompt again: its prefix is served from the radix cache.
      assertThat(value(later, "prefix_cache_hits")).isPositive();
      assertThat(value(later, "spec_decode_num_draft_tokens_total")).isPositive();
      assertThat(value(later, "spec_decode_num_accepted_tokens_total"))
          .isLessThanOrEqualTo(value(later, "spec_decode_num_draft_tokens_total"));
      // Every series the shipped Grafana dashboard queries is one the job serves.
      String dashboard = Files.readString(Path.of("..", "deploy/grafana/dashboards/flinfer.json"));
      Matcher queried = Pattern.compile("flink_\\w+").matcher(dashboard);
      int names = 0;
      while (queried.find()) {
        assertThat(later).as(queried.group()).containsPattern("(?m)^" + queried.group() + "\\{");
        names++;
      }
      assertThat(names).isGreaterThan(10);
    } finally {
      assertThat(run.exitCode()).isZero();
    }
  }

  /**
   * Scrapes until {@code metric} satisfies {@code until}; then one scrape more, which it returns. A
   * scrape reads the metric families one by one in no fixed order, so a request that ran while one
   * was read can be counted in one family and not yet in another; the scrape after holds it in all.
   */
  private static String awaitMetric(
      String url, String metric, DoublePredicate until, BackgroundRun run) throws Exception {
    long end = System.currentTimeMillis() + 180_000;
    String last = "";
    while (System.currentTimeMillis() < end && !run.isDone()) {
      try {
        last = scrape(url);
        if (series(last, metric) != null && until.test(value(last, metric))) {
          return scrape(url);
        }
      } catch (java.io.IOException notYet) {
        // the reporter starts with the job
      }
      Thread.sleep(200);
    }
    throw new AssertionError(
        metric
            + " never reached its value (run done: "
            + run.isDone()
            + "); last scrape:\n"
            + last);
  }

  private static String scrape(String url) throws Exception {
    return HTTP.send(
            HttpRequest.newBuilder(URI.create(url)).GET().build(),
            HttpResponse.BodyHandlers.ofString())
        .body();
  }

  /** The line of the inference metric {@code name} (Flink's scope before it), or null. */
  private static String series(String scrape, String name) {
    Matcher m =
        Pattern.compile("(?m)^flink_\\w*_flinfer_model_" + name + "\\{[^}]*\\} \\S+$")
            .matcher(scrape);
    return m.find() ? m.group() : null;
  }

  private static double value(String scrape, String name) {
    String line = series(scrape, name);
    assertThat(line).as(name).isNotNull();
    return Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
  }
}
