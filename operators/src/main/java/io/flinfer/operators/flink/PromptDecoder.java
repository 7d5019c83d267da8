package io.flinfer.operators.flink;

import io.flinfer.avro.DeadLetter;
import io.flinfer.avro.PromptRequest;
import io.flinfer.avro.history.PromptRequests;
import io.flinfer.operators.request.Rejection;
import io.flinfer.operators.request.RequestLimits;
import io.flinfer.operators.request.RequestValidator;
import io.flinfer.runtime.model.LlamaModel;
import java.util.Set;
import org.apache.avro.message.BinaryMessageDecoder;
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
  private final RequestLimits limits;
  private transient RequestValidator validator;
  private transient BinaryMessageDecoder<PromptRequest> decoder;
  private transient Counter deadLetters;

  public PromptDecoder(ModelSource modelSource, RequestLimits limits) {
    this.modelSource = modelSource;
    this.limits = limits;
  }

  @Override
  public void open(OpenContext context) {
    LlamaModel model = modelSource.load();
    validator = RequestValidator.forModel(model, limits, Set.of());
    decoder = PromptRequests.decoder();
    deadLetters = getRuntimeContext().getMetricGroup().addGroup("flinfer").counter("deadLetters");
  }

  @Override
  public void processElement(RawPrompt raw, Context ctx, Collector<TokenizedPrompt> out) {
    long now = System.currentTimeMillis();
    PromptRequest request;
    try {
      request = PromptRequests.decode(decoder, raw.value == null ? new byte[0] : raw.value);
    } catch (Exception e) {
      reject(ctx, raw, null, "decode", Rejection.UNDECODABLE, "not a PromptRequest: " + e);
      return;
    }
    RequestValidator.Outcome outcome = validator.validate(request, now);
    if (!outcome.ok()) {
      reject(ctx, raw, request.getRequestId(), "validate", outcome.rejection(), outcome.error());
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
    p.queuedAtMillis = now;
    p.recordTimestampMillis =
        raw.timestampMillis >= 0 && raw.timestampMillis <= now ? raw.timestampMillis : now;
    out.collect(p);
  }

  private void reject(
      Context ctx, RawPrompt raw, String id, String stage, Rejection reason, String error) {
    ctx.output(DEAD_LETTERS, DeadLetters.of(raw, id, stage, reason, error, limits));
    deadLetters.inc();
  }
}
