package io.flinfer.operators.flink;

import io.flinfer.avro.DeadLetter;
import io.flinfer.operators.flink.state.FirstSeenSerializer;
import io.flinfer.operators.request.Rejection;
import io.flinfer.operators.request.RequestLimits;
import java.nio.ByteBuffer;
import java.time.Duration;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.StateTtlConfig;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.metrics.Counter;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;

/**
 * Keyed by request id: within the dedupe window a request id is answered once. A second record with
 * the same id, while the first is in flight or after it was answered, gets a dead letter ({@code
 * duplicate_request_id}) naming where the first was read. The same record read again (the source
 * re-reading it) is the same request, not a duplicate: it is counted ({@code redeliveredRecords})
 * and not served twice. The state is one small entry per id, expiring after the window; it is
 * keyed, so it survives restores and rescaling.
 */
public class RequestDedupe extends KeyedProcessFunction<String, TokenizedPrompt, TokenizedPrompt> {
  public static final OutputTag<DeadLetter> DEAD_LETTERS = new OutputTag<>("duplicates") {};

  private final Duration window;
  private final RequestLimits limits;
  private final CarriedHeaders headers;
  private transient ValueState<FirstSeen> firstSeen;
  private transient Counter duplicates;
  private transient Counter redelivered;

  /**
   * @param window how long an id stays taken after its first record was read
   */
  public RequestDedupe(Duration window, RequestLimits limits) {
    this(window, limits, CarriedHeaders.none());
  }

  /**
   * @param window how long an id stays taken after its first record was read
   * @param headers the headers a duplicate's dead letter carries, from its request's metadata
   */
  public RequestDedupe(Duration window, RequestLimits limits, CarriedHeaders headers) {
    if (window.isNegative() || window.isZero()) {
      throw new IllegalArgumentException("the dedupe window must be positive: " + window);
    }
    this.window = window;
    this.limits = limits;
    this.headers = headers;
  }

  @Override
  public void open(OpenContext context) {
    ValueStateDescriptor<FirstSeen> d =
        new ValueStateDescriptor<>("first-seen", new FirstSeenSerializer());
    d.enableTimeToLive(
        StateTtlConfig.newBuilder(window)
            .setUpdateType(StateTtlConfig.UpdateType.OnCreateAndWrite)
            .setStateVisibility(StateTtlConfig.StateVisibility.NeverReturnExpired)
            .build());
    firstSeen = getRuntimeContext().getState(d);
    var group = getRuntimeContext().getMetricGroup().addGroup("flinfer");
    duplicates = group.counter("duplicateRequests");
    redelivered = group.counter("redeliveredRecords");
  }

  @Override
  public void processElement(TokenizedPrompt p, Context ctx, Collector<TokenizedPrompt> out)
      throws Exception {
    FirstSeen seen = firstSeen.value();
    if (seen == null) {
      firstSeen.update(FirstSeen.of(p));
      out.collect(p);
    } else if (seen.isRecordOf(p)) {
      redelivered.inc();
    } else {
      duplicates.inc();
      ctx.output(DEAD_LETTERS, deadLetter(p, seen));
    }
  }

  private DeadLetter deadLetter(TokenizedPrompt p, FirstSeen seen) throws java.io.IOException {
    ByteBuffer b = p.request.toByteBuffer();
    byte[] bytes = new byte[b.remaining()];
    b.get(bytes);
    String error =
        String.format(
            "request_id was first read at %s-%d offset %d; within the dedupe window of %s a"
                + " request id is answered once",
            seen.topic(),
            seen.partition(),
            seen.offset(),
            window.toString().substring(2).toLowerCase(java.util.Locale.ROOT));
    return DeadLetters.builder(
            bytes,
            null,
            p.request.getRequestId(),
            "dedupe",
            Rejection.DUPLICATE_REQUEST_ID,
            error,
            limits)
        .setSourceTopic(p.topic == null ? "" : p.topic)
        .setSourcePartition(p.partition)
        .setSourceOffset(p.offset)
        .setOriginalSourcePartition(seen.partition())
        .setOriginalSourceOffset(seen.offset())
        .setHeaders(headers.of(p.request.getMetadata()))
        .build();
  }
}
