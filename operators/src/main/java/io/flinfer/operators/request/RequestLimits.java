package io.flinfer.operators.request;

import java.io.Serializable;

/**
 * How large each part of a {@link io.flinfer.avro.PromptRequest} may be. Over a limit a request is
 * a dead letter, never served and never echoed whole. Together they bound every record the job
 * writes below {@link #maxRecordBytes()}, the producer's {@code max.request.size}; the sinks check
 * that bound again before sending. Immutable; build with {@link #builder()}, which validates.
 *
 * @param maxPromptBytes UTF-8 bytes of a text prompt, checked before tokenizing; 0: 32 bytes per
 *     token of the model's context, at most 1,000,000
 * @param maxNewTokens the largest {@code max_new_tokens}
 * @param maxIdBytes UTF-8 bytes of {@code request_id}, {@code tenant} and {@code routing_key} each
 * @param maxMetadataEntries entries of {@code metadata}
 * @param maxMetadataBytes UTF-8 bytes of {@code metadata}'s keys and values together
 * @param maxStopStrings entries of {@code stop}
 * @param maxStopStringBytes UTF-8 bytes of each stop string
 * @param maxStopTokenIds entries of {@code stop_token_ids}
 * @param deadLetterEchoBytes bytes of an offending record (and of its key) a dead letter echoes,
 *     and the most bytes (names and values) of the headers a record carries
 * @param maxRecordBytes the largest record (key and value) the job sends to Kafka
 */
public record RequestLimits(
    int maxPromptBytes,
    int maxNewTokens,
    int maxIdBytes,
    int maxMetadataEntries,
    int maxMetadataBytes,
    int maxStopStrings,
    int maxStopStringBytes,
    int maxStopTokenIds,
    int deadLetterEchoBytes,
    int maxRecordBytes)
    implements Serializable {

  /** Kafka's default {@code max.request.size}, less room for the record batch's own header. */
  public static final int DEFAULT_MAX_RECORD_BYTES = 1_048_576 - 1024;

  public static Builder builder() {
    return new Builder();
  }

  public static RequestLimits defaults() {
    return builder().build();
  }

  /** The prompt byte limit for a model whose context holds {@code contextLength} tokens. */
  public int promptBytesFor(int contextLength) {
    return maxPromptBytes > 0
        ? maxPromptBytes
        : (int) Math.min(1_000_000L, 32L * Math.max(1, contextLength));
  }

  /** Validating builder with the documented defaults. */
  public static final class Builder {
    private int maxPromptBytes = 0;
    private int maxNewTokens = 4096;
    private int maxIdBytes = 256;
    private int maxMetadataEntries = 32;
    private int maxMetadataBytes = 16_384;
    private int maxStopStrings = 16;
    private int maxStopStringBytes = 256;
    private int maxStopTokenIds = 64;
    private int deadLetterEchoBytes = 4096;
    private int maxRecordBytes = DEFAULT_MAX_RECORD_BYTES;

    public Builder maxPromptBytes(int v) {
      maxPromptBytes = v;
      return this;
    }

    public Builder maxNewTokens(int v) {
      maxNewTokens = v;
      return this;
    }

    public Builder maxIdBytes(int v) {
      maxIdBytes = v;
      return this;
    }

    public Builder maxMetadata(int entries, int bytes) {
      maxMetadataEntries = entries;
      maxMetadataBytes = bytes;
      return this;
    }

    public Builder maxStops(int strings, int bytesEach, int tokenIds) {
      maxStopStrings = strings;
      maxStopStringBytes = bytesEach;
      maxStopTokenIds = tokenIds;
      return this;
    }

    public Builder deadLetterEchoBytes(int v) {
      deadLetterEchoBytes = v;
      return this;
    }

    public Builder maxRecordBytes(int v) {
      maxRecordBytes = v;
      return this;
    }

    public RequestLimits build() {
      check(maxPromptBytes >= 0, "max prompt bytes must be >= 0 (0: from the context)");
      check(maxNewTokens >= 1, "max new tokens must be >= 1");
      check(maxIdBytes >= 8, "max id bytes must be >= 8");
      check(maxMetadataEntries >= 0 && maxMetadataBytes >= 0, "metadata limits must be >= 0");
      check(
          maxStopStrings >= 0 && maxStopStringBytes >= 1 && maxStopTokenIds >= 0,
          "stop limits must be >= 0");
      check(deadLetterEchoBytes >= 0, "dead letter echo bytes must be >= 0");
      check(maxRecordBytes >= 1024, "max record bytes must be >= 1024");
      // A dead letter holds the echo of the record and of its key, the request id, a reason, and
      // the carried headers (at most the echo bytes) in its value and as Kafka headers.
      check(
          4L * deadLetterEchoBytes + maxIdBytes + 4096 <= maxRecordBytes,
          "dead letters (four times the echo bytes, the id and 4 KiB) must fit in max record"
              + " bytes");
      return new RequestLimits(
          maxPromptBytes,
          maxNewTokens,
          maxIdBytes,
          maxMetadataEntries,
          maxMetadataBytes,
          maxStopStrings,
          maxStopStringBytes,
          maxStopTokenIds,
          deadLetterEchoBytes,
          maxRecordBytes);
    }

    private static void check(boolean ok, String message) {
      if (!ok) {
        throw new IllegalArgumentException(message);
      }
    }
  }
}
