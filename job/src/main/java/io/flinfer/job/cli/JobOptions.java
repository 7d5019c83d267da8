package io.flinfer.job.cli;

import io.flinfer.job.model.ModelLocator;
import io.flinfer.job.pipeline.PipelineSettings;
import io.flinfer.operators.flink.ModelSource;
import picocli.CommandLine.Option;

/** The streaming job's options, shared by {@code run} and {@code job}. */
final class JobOptions {
  @Option(names = "--prompts-topic", defaultValue = "flinfer.prompts")
  String promptsTopic;

  @Option(names = "--completions-topic", defaultValue = "flinfer.completions")
  String completionsTopic;

  @Option(names = "--chunks-topic", defaultValue = "flinfer.chunks")
  String chunksTopic;

  @Option(names = "--dead-letters-topic", defaultValue = "flinfer.dead-letters")
  String deadLettersTopic;

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

  /** The model files of {@code where}, as each task loads them. */
  static ModelSource modelSource(ModelLocator.Location where) {
    return new ModelSource(
        where.model().toAbsolutePath().toString(),
        where.tokenizer() == null ? null : where.tokenizer().toAbsolutePath().toString());
  }

  PipelineSettings settings(String bootstrapServers, ModelLocator.Location where) {
    ModelSource model = modelSource(where);
    return PipelineSettings.builder()
        .bootstrapServers(bootstrapServers)
        .topics(promptsTopic, completionsTopic, chunksTopic, deadLettersTopic)
        .model(model, where.model().getFileName().toString())
        .engine(maxRunningRequests, maxTotalTokens, chunkedPrefillSize, engineThreads, backend)
        .streamIntervalMillis(streamIntervalMs)
        .checkpointIntervalMillis(checkpointIntervalMs)
        .build();
  }
}
