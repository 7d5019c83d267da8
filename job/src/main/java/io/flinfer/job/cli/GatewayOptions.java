package io.flinfer.job.cli;

import io.flinfer.job.gateway.GatewaySettings;
import io.flinfer.job.pipeline.PipelineSettings;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import picocli.CommandLine.Option;

/** How the OpenAI-compatible gateway serves, shared by {@code gateway} and {@code run}. */
final class GatewayOptions {
  @Option(
      names = "--api-keys",
      paramLabel = "FILE",
      description =
          "Bearer tokens, a line KEY TENANT each: a request needs one, and its tenant (prefix-cache"
              + " namespace) is the key's. Without it the gateway is open.")
  Path apiKeys;

  @Option(
      names = "--max-lag",
      defaultValue = "1000",
      description =
          "Refuse new requests with 429 while the job has more than this many prompts unread"
              + " (default: ${DEFAULT-VALUE}; 0: never).")
  long maxLag;

  @Option(
      names = "--request-timeout-s",
      defaultValue = "600",
      description = "How long a request waits for its answer (default: ${DEFAULT-VALUE}).")
  long requestTimeoutSeconds;

  GatewaySettings settings(PipelineSettings pipeline, String host, int port) {
    if (apiKeys != null && !Files.isRegularFile(apiKeys)) {
      throw new IllegalArgumentException("--api-keys: no such file: " + apiKeys);
    }
    if (requestTimeoutSeconds < 1) {
      throw new IllegalArgumentException("--request-timeout-s must be at least 1");
    }
    return new GatewaySettings(
        pipeline,
        host,
        port,
        apiKeys,
        maxLag,
        Duration.ofSeconds(requestTimeoutSeconds),
        Duration.ofHours(24),
        100_000);
  }
}
