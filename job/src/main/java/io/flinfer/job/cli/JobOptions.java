package io.flinfer.job.cli;

import io.flinfer.job.model.ModelLocator;
import io.flinfer.job.pipeline.PipelineSettings;
import io.flinfer.operators.flink.ModelSource;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** The live job's topics and engine options, shared by {@code run} and {@code job}. */
final class JobOptions {
  @Option(names = "--prompts-topic", defaultValue = "flinfer.prompts")
  String promptsTopic;

  @Option(names = "--completions-topic", defaultValue = "flinfer.completions")
  String completionsTopic;

  @Option(names = "--chunks-topic", defaultValue = "flinfer.chunks")
  String chunksTopic;

  @Option(names = "--dead-letters-topic", defaultValue = "flinfer.dead-letters")
  String deadLettersTopic;

  @Mixin EngineOptions engine = new EngineOptions();

  @Mixin LimitOptions limits = new LimitOptions();

  @Mixin StateOptions state = new StateOptions();

  @Mixin FormatOptions formats = new FormatOptions();

  @Mixin MetricsOptions metrics = new MetricsOptions();

  /** The model files of {@code where}, as each task loads them. */
  static ModelSource modelSource(ModelLocator.Location where) {
    return new ModelSource(
        where.model().toAbsolutePath().toString(),
        where.tokenizer() == null ? null : where.tokenizer().toAbsolutePath().toString());
  }

  PipelineSettings settings(String bootstrapServers, ModelLocator.Location where) {
    return formats
        .apply(limits.apply(engine.apply(PipelineSettings.builder(), where)))
        .bootstrapServers(bootstrapServers)
        .topics(promptsTopic, completionsTopic, chunksTopic, deadLettersTopic)
        .build();
  }
}
