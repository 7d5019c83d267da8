package io.flinfer.job.cli;

import io.flinfer.job.pipeline.PipelineSettings;
import io.flinfer.operators.flink.CarriedHeaders;
import io.flinfer.operators.format.OutputFormat;
import java.util.List;
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

  @Option(
      names = "--carry-headers",
      paramLabel = "NAME",
      split = ",",
      description =
          "Prompt record headers (such as traceparent) that travel with their requests: into the"
              + " request's metadata as UTF-8 text, and back out as headers on its completion, its"
              + " chunks and any dead letter about it (default: none).")
  List<String> carryHeaders = List.of();

  PipelineSettings.Builder apply(PipelineSettings.Builder b) {
    return b.schemaRegistryUrl(schemaRegistryUrl)
        .outputFormat(OutputFormat.of(outputFormat))
        .carryHeaders(CarriedHeaders.of(carryHeaders));
  }
}
