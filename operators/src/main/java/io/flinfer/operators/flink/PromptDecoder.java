package io.flinfer.operators.flink;

import io.flinfer.avro.DeadLetter;
import io.flinfer.avro.PromptRequest;
import io.flinfer.operators.request.RequestValidator;
import io.flinfer.runtime.model.LlamaModel;
import java.nio.ByteBuffer;
import java.util.Set;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.metrics.Counter;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;

/**
 * Decodes and validates prompt records: undecodable bytes and invalid requests go to the
 * dead-letter output with the reason, everything else on as a {@link TokenizedPrompt}. The job
 * never fails on input.
 */
public class PromptDecoder extends ProcessFunction<RawPrompt, TokenizedPrompt> {
  public static final OutputTag<DeadLetter> DEAD_LETTERS = new OutputTag<>("dead-letters") {};

  private final ModelSource modelSource;
  private final int maxNewTokensLimit;
  private transient RequestValidator validator;
  private transient Counter deadLetters;

  public PromptDecoder(ModelSource modelSource, int maxNewTokensLimit) {
    this.modelSource = modelSource;
    this.maxNewTokensLimit = maxNewTokensLimit;
  }

  @Override
  public void open(OpenContext context) {
    LlamaModel model = modelSource.load();
    validator =
        new RequestValidator(
            model.tokenizer(), model.config().contextLength(), maxNewTokensLimit, Set.of());
    deadLetters = getRuntimeContext().getMetricGroup().addGroup("flinfer").counter("deadLetters");
  }

  @Override
  public void processElement(RawPrompt raw, Context ctx, Collector<TokenizedPrompt> out) {
    PromptRequest request;
    try {
      request = PromptRequest.fromByteBuffer(ByteBuffer.wrap(raw.value));
    } catch (Exception e) {
      ctx.output(
          DEAD_LETTERS, deadLetter(raw, null, "decode", "not a PromptRequest: " + e.getMessage()));
      deadLetters.inc();
      return;
    }
    RequestValidator.Outcome outcome = validator.validate(request, System.currentTimeMillis());
    if (!outcome.ok()) {
      ctx.output(
          DEAD_LETTERS, deadLetter(raw, request.getRequestId(), "validate", outcome.error()));
      deadLetters.inc();
      return;
    }
    TokenizedPrompt p = new TokenizedPrompt();
    p.request = request;
    p.promptIds = outcome.request().promptIds();
    p.routingKey = outcome.request().routingKey();
    p.seed = outcome.request().req().params().seed();
    p.topic = raw.topic;
    p.partition = raw.partition;
    p.offset = raw.offset;
    p.queuedAtMillis = System.currentTimeMillis();
    out.collect(p);
  }

  static DeadLetter deadLetter(RawPrompt raw, String requestId, String stage, String error) {
    return DeadLetter.newBuilder()
        .setRaw(ByteBuffer.wrap(raw.value == null ? new byte[0] : raw.value))
        .setSourceTopic(raw.topic == null ? "" : raw.topic)
        .setSourcePartition(raw.partition)
        .setSourceOffset(raw.offset)
        .setRequestId(requestId)
        .setStage(stage)
        .setError(error)
        .setTimestampMs(System.currentTimeMillis())
        .build();
  }
}
