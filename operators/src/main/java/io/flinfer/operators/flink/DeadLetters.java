package io.flinfer.operators.flink;

import io.flinfer.avro.DeadLetter;
import io.flinfer.operators.request.Rejection;
import io.flinfer.operators.request.RequestLimits;
import io.flinfer.operators.request.Utf8;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Map;

/**
 * Dead letters of bounded size whatever the input: the offending record and its key are echoed up
 * to {@link RequestLimits#deadLetterEchoBytes()}, the request id up to the id limit, the error up
 * to 1 KiB. So no dead letter can be larger than the job may send.
 */
public final class DeadLetters {
  static final int MAX_ERROR_BYTES = 1024;

  private DeadLetters() {}

  /** A dead letter for a record read from the prompts topic. */
  public static DeadLetter of(
      RawPrompt raw,
      String requestId,
      String stage,
      Rejection reason,
      String error,
      RequestLimits limits) {
    return builder(raw.value, raw.key, requestId, stage, reason, error, limits)
        .setSourceTopic(raw.topic == null ? "" : raw.topic)
        .setSourcePartition(raw.partition)
        .setSourceOffset(raw.offset)
        .setHeaders(raw.headers == null ? Map.of() : raw.headers)
        .build();
  }

  /** A dead letter for a decoded request, echoing {@code value} (its record's bytes). */
  public static DeadLetter.Builder builder(
      byte[] value,
      byte[] key,
      String requestId,
      String stage,
      Rejection reason,
      String error,
      RequestLimits limits) {
    byte[] v = value == null ? new byte[0] : value;
    int echo = limits.deadLetterEchoBytes();
    return DeadLetter.newBuilder()
        .setRaw(ByteBuffer.wrap(v.length > echo ? Arrays.copyOf(v, echo) : v))
        .setRawSize(v.length)
        .setSourceKey(
            key == null
                ? null
                : ByteBuffer.wrap(key.length > echo ? Arrays.copyOf(key, echo) : key))
        .setRequestId(Utf8.truncate(requestId, limits.maxIdBytes()))
        .setStage(stage)
        .setReason(reason.code())
        .setError(Utf8.truncate(error, MAX_ERROR_BYTES))
        .setTimestampMs(System.currentTimeMillis());
  }
}
