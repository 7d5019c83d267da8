package io.flinfer.job.cli;

import io.flinfer.job.pipeline.PipelineSettings;
import io.flinfer.operators.request.RequestLimits;
import java.time.Duration;
import java.util.Locale;
import picocli.CommandLine.Option;

/**
 * What a request may hold and how long its id stays taken, shared by the live job, the replay and
 * the embedded run. Over a limit a request gets a dead letter, never an answer.
 */
final class LimitOptions {
  @Option(
      names = "--max-prompt-bytes",
      defaultValue = "0",
      description =
          "UTF-8 bytes of a text prompt, checked before tokenizing; 0: 32 per token of the model's"
              + " context, at most 1,000,000 (default: ${DEFAULT-VALUE}).")
  int maxPromptBytes;

  @Option(
      names = "--max-new-tokens-limit",
      defaultValue = "4096",
      description = "The largest max_new_tokens a request may ask for (default: ${DEFAULT-VALUE}).")
  int maxNewTokens;

  @Option(
      names = "--max-id-bytes",
      defaultValue = "256",
      description =
          "UTF-8 bytes of request_id, tenant and routing_key each (default: ${DEFAULT-VALUE}).")
  int maxIdBytes;

  @Option(
      names = "--max-metadata-entries",
      defaultValue = "32",
      description = "Entries of a request's metadata (default: ${DEFAULT-VALUE}).")
  int maxMetadataEntries;

  @Option(
      names = "--max-metadata-bytes",
      defaultValue = "16384",
      description = "UTF-8 bytes of its keys and values together (default: ${DEFAULT-VALUE}).")
  int maxMetadataBytes;

  @Option(
      names = "--max-stop-strings",
      defaultValue = "16",
      description = "Stop strings of a request (default: ${DEFAULT-VALUE}).")
  int maxStopStrings;

  @Option(
      names = "--max-stop-string-bytes",
      defaultValue = "256",
      description = "UTF-8 bytes of each stop string (default: ${DEFAULT-VALUE}).")
  int maxStopStringBytes;

  @Option(
      names = "--max-stop-token-ids",
      defaultValue = "64",
      description = "Stop token ids of a request (default: ${DEFAULT-VALUE}).")
  int maxStopTokenIds;

  @Option(
      names = "--dead-letter-echo-bytes",
      defaultValue = "4096",
      description =
          "Bytes of an offending record (and of its key) a dead letter echoes, and the most"
              + " bytes of the headers a record carries (--carry-headers) (default:"
              + " ${DEFAULT-VALUE}).")
  int deadLetterEchoBytes;

  @Option(
      names = "--max-record-bytes",
      defaultValue = "" + RequestLimits.DEFAULT_MAX_RECORD_BYTES,
      description =
          "The largest record the job sends; a larger output becomes a dead letter (default:"
              + " ${DEFAULT-VALUE}, under Kafka's default max.request.size).")
  int maxRecordBytes;

  @Option(
      names = "--dedupe-window",
      defaultValue = "24h",
      description =
          "How long a request id stays taken after its first record (ms, s, m, h or d): a second"
              + " record with it gets a dead letter (default: ${DEFAULT-VALUE}).")
  String dedupeWindow;

  RequestLimits limits() {
    return RequestLimits.builder()
        .maxPromptBytes(maxPromptBytes)
        .maxNewTokens(maxNewTokens)
        .maxIdBytes(maxIdBytes)
        .maxMetadata(maxMetadataEntries, maxMetadataBytes)
        .maxStops(maxStopStrings, maxStopStringBytes, maxStopTokenIds)
        .deadLetterEchoBytes(deadLetterEchoBytes)
        .maxRecordBytes(maxRecordBytes)
        .build();
  }

  /** Sets these limits and the dedupe window on {@code b}. */
  PipelineSettings.Builder apply(PipelineSettings.Builder b) {
    return b.limits(limits()).dedupeWindow(parseDuration("--dedupe-window", dedupeWindow));
  }

  /**
   * A positive duration such as {@code 500ms}, {@code 90s}, {@code 30m}, {@code 24h}, {@code 7d}.
   */
  static Duration parseDuration(String option, String text) {
    String t = text.trim().toLowerCase(Locale.ROOT);
    int unitAt = 0;
    while (unitAt < t.length() && Character.isDigit(t.charAt(unitAt))) {
      unitAt++;
    }
    if (unitAt == 0 || unitAt > 12) {
      throw new IllegalArgumentException(
          option + " must be a number and a unit (ms, s, m, h, d), not '" + text + "'");
    }
    long n = Long.parseLong(t.substring(0, unitAt));
    Duration d =
        switch (t.substring(unitAt)) {
          case "ms" -> Duration.ofMillis(n);
          case "s" -> Duration.ofSeconds(n);
          case "m" -> Duration.ofMinutes(n);
          case "h" -> Duration.ofHours(n);
          case "d" -> Duration.ofDays(n);
          default ->
              throw new IllegalArgumentException(
                  option + " must end in ms, s, m, h or d, not '" + text + "'");
        };
    if (d.isZero()) {
      throw new IllegalArgumentException(option + " must be positive");
    }
    return d;
  }
}
