package io.flinfer.job.gateway;

import io.flinfer.job.pipeline.PipelineSettings;
import java.nio.file.Path;
import java.time.Duration;

/**
 * How a gateway serves: where it listens, the job's topics and model (from its pipeline settings),
 * its API keys (null: open), how far behind the job may fall before it refuses requests, how long a
 * request waits for its answer, and how far back (and how many) answers it keeps for retries.
 */
public record GatewaySettings(
    PipelineSettings pipeline,
    String host,
    int port,
    Path apiKeys,
    long maxLag,
    Duration requestTimeout,
    Duration lookback,
    int keep) {
  public GatewaySettings {
    if (port < 0 || port > 65535) {
      throw new IllegalArgumentException("--port must be a port, or 0 for a free one");
    }
    if (requestTimeout.isNegative() || requestTimeout.isZero()) {
      throw new IllegalArgumentException("--request-timeout must be positive");
    }
  }
}
