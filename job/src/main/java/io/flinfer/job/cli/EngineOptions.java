package io.flinfer.job.cli;

import io.flinfer.job.model.ModelLocator;
import io.flinfer.job.pipeline.PipelineSettings;
import picocli.CommandLine.Option;

/** How each inference subtask serves, shared by the live job and the replay. */
final class EngineOptions {
  @Option(
      names = "--max-running-requests",
      defaultValue = "32",
      description = "Per inference subtask (default: ${DEFAULT-VALUE}).")
  int maxRunningRequests;

  @Option(
      names = "--max-total-tokens",
      defaultValue = "16384",
      description = "KV pool tokens per inference subtask (default: ${DEFAULT-VALUE}).")
  int maxTotalTokens;

  @Option(names = "--chunked-prefill-size", defaultValue = "512")
  int chunkedPrefillSize;

  @Option(
      names = "--engine-threads",
      defaultValue = "1",
      description =
          "Worker threads of each engine; size them from the task slots sharing a machine (default: ${DEFAULT-VALUE}).")
  int engineThreads;

  @Option(
      names = "--backend",
      defaultValue = "auto",
      description = "cpu, cuda or auto (default: ${DEFAULT-VALUE}).")
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

  /** Sets the model of {@code where} and these options on {@code b}. */
  PipelineSettings.Builder apply(PipelineSettings.Builder b, ModelLocator.Location where) {
    return b.model(JobOptions.modelSource(where), where.model().getFileName().toString())
        .engine(maxRunningRequests, maxTotalTokens, chunkedPrefillSize, engineThreads, backend)
        .streamIntervalMillis(streamIntervalMs)
        .checkpointIntervalMillis(checkpointIntervalMs);
  }
}
