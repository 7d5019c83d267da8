package io.flinfer.job.cli;

import io.flinfer.job.pipeline.PipelineSettings;
import io.flinfer.operators.format.OutputFormat;
import picocli.CommandLine.Option;

/**
 * How the job reads and writes records, shared by the live job, the replay and the embedded run.
 */
final class FormatOptions {
  @Option(
      names = "--schema-registry-url",
      paramLabel = "URL",
      description =
          "A Confluent Schema Registry: prompt records in Confluent's wire format are read through"
              + " it, and with --output-format confluent the output's schemas registered there.")
  String schemaRegistryUrl;

  @Option(
      names = "--output-format",
      defaultValue = "avro",
      description =
          "avro (single-object encoding), confluent (Confluent's wire format) or json (default:"
              + " ${DEFAULT-VALUE}). Prompts are read in any of the three, told apart by their"
              + " first bytes.")
  String outputFormat;

  PipelineSettings.Builder apply(PipelineSettings.Builder b) {
    return b.schemaRegistryUrl(schemaRegistryUrl).outputFormat(OutputFormat.of(outputFormat));
  }
}
