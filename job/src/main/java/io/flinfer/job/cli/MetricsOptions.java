package io.flinfer.job.cli;

import io.flinfer.job.kafka.EmbeddedKafka;
import org.apache.flink.configuration.Configuration;
import picocli.CommandLine.Option;

/** Where an in-process job serves its metrics to Prometheus. */
final class MetricsOptions {
  @Option(
      names = "--metrics-port",
      defaultValue = "9249",
      description =
          "Serve Flink's metrics (the inference metrics among them) to Prometheus at"
              + " http://HOST:PORT/metrics when the job runs in this process; 0: not served"
              + " (default: ${DEFAULT-VALUE}). On a cluster, Flink's own configuration decides.")
  int metricsPort;

  /** Checks the port is free, before anything starts. */
  void check() {
    if (metricsPort < 0) {
      throw new IllegalArgumentException("--metrics-port must be 0 (off) or a port");
    }
    if (metricsPort > 0) {
      EmbeddedKafka.requireFree(metricsPort, "--metrics-port");
    }
  }

  /** Configures Flink's Prometheus reporter on {@code conf}. */
  void apply(Configuration conf) {
    if (metricsPort > 0) {
      conf.setString(
          "metrics.reporter.prom.factory.class",
          "org.apache.flink.metrics.prometheus.PrometheusReporterFactory");
      conf.setString("metrics.reporter.prom.port", String.valueOf(metricsPort));
    }
  }
}
