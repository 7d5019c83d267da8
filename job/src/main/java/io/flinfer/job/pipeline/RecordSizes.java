package io.flinfer.job.pipeline;

import io.flinfer.avro.Completion;
import io.flinfer.avro.CompletionChunk;
import io.flinfer.avro.DeadLetter;
import io.flinfer.operators.flink.DeadLetters;
import io.flinfer.operators.request.Rejection;
import io.flinfer.operators.request.RequestLimits;
import java.io.Serializable;
import java.nio.ByteBuffer;

/**
 * What the sinks send instead of a record too large for Kafka: a dead letter ({@code
 * output_too_large}) naming the request and its source record, echoing the record's first bytes.
 */
final class RecordSizes implements Serializable {
  /** Turns an oversized record into a dead letter. */
  interface Oversize<T> extends Serializable {
    DeadLetter deadLetter(T element, byte[] value, int recordBytes);
  }

  private final RequestLimits limits;

  RecordSizes(RequestLimits limits) {
    this.limits = limits;
  }

  DeadLetter completionTooLarge(Completion c, byte[] value, int recordBytes) {
    return letter(value, c.getRequestId(), "completion", recordBytes)
        .setSourceTopic(c.getProvenance().getSourceTopic())
        .setSourcePartition(c.getProvenance().getSourcePartition())
        .setSourceOffset(c.getProvenance().getSourceOffset())
        .build();
  }

  DeadLetter chunkTooLarge(CompletionChunk c, byte[] value, int recordBytes) {
    return letter(value, c.getRequestId(), "chunk " + c.getIndex(), recordBytes).build();
  }

  private DeadLetter.Builder letter(byte[] value, String requestId, String what, int recordBytes) {
    return DeadLetters.builder(
        value,
        null,
        requestId,
        "output",
        Rejection.OUTPUT_TOO_LARGE,
        tooLarge(what, recordBytes),
        limits);
  }

  /** A dead letter is bounded by construction; should one still be too large, its echoes go. */
  DeadLetter deadLetterTooLarge(DeadLetter d, byte[] value, int recordBytes) {
    DeadLetter.Builder b =
        DeadLetter.newBuilder(d).setRaw(ByteBuffer.allocate(0)).setSourceKey(null);
    return b.setError(d.getError() + " (" + tooLarge("dead letter", recordBytes) + ")").build();
  }

  private String tooLarge(String what, int recordBytes) {
    return "the "
        + what
        + " is "
        + recordBytes
        + " bytes; the largest record the job sends is "
        + limits.maxRecordBytes();
  }
}
