package io.flinfer.operators.flink;

import io.flinfer.avro.DeadLetter;
import io.flinfer.avro.PromptRequest;
import io.flinfer.operators.format.InputFormat;
import io.flinfer.operators.format.RecordReader;
import io.flinfer.operators.format.RegistryUnavailableException;
import io.flinfer.operators.format.SchemaRegistryClient;
import io.flinfer.operators.request.Rejection;
import io.flinfer.operators.request.RequestLimits;
import io.flinfer.operators.request.RequestValidator;
import io.flinfer.runtime.model.LlamaModel;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;

/**
 * Decodes and validates prompt records: undecodable bytes and invalid requests go to the
 * dead-letter output with the reason, everything else on as a {@link TokenizedPrompt}, its carried
 * headers in its metadata. The job never fails on input.
 */
public class PromptDecoder extends ProcessFunction<RawPrompt, TokenizedPrompt> {
  public static final OutputTag<DeadLetter> DEAD_LETTERS = new OutputTag<>("dead-letters") {};

  private final ModelSource modelSource;
  private final RequestLimits limits;
  private final String schemaRegistryUrl;
  private transient RequestValidator validator;
  private transient RecordReader<PromptRequest> records;
  private transient Counter deadLetters;
  private transient Map<InputFormat, Counter> byFormat;

  /**
   * @param schemaRegistryUrl where Confluent-format records' schemas are looked up, or null
   */
  public PromptDecoder(ModelSource modelSource, RequestLimits limits, String schemaRegistryUrl) {
    this.modelSource = modelSource;
    this.limits = limits;
    this.schemaRegistryUrl = schemaRegistryUrl;
  }

  @Override
  public void open(OpenContext context) {
    LlamaModel model = modelSource.load();
    validator = RequestValidator.forModel(model, limits, Set.of());
    records =
        RecordReader.prompts(
            schemaRegistryUrl == null ? null : new SchemaRegistryClient(schemaRegistryUrl));
    MetricGroup group = getRuntimeContext().getMetricGroup().addGroup("flinfer");
    deadLetters = group.counter("deadLetters");
    byFormat = new EnumMap<>(InputFormat.class);
    for (InputFormat f : InputFormat.values()) {
      byFormat.put(f, group.addGroup("input_format", f.label()).counter("records"));
    }
  }

  @Override
  public void processElement(RawPrompt raw, Context ctx, Collector<TokenizedPrompt> out) {
    long now = System.currentTimeMillis();
    PromptRequest request;
    try {
      RecordReader.Decoded<PromptRequest> d =
          records.read(raw.value == null ? new byte[0] : raw.value, raw.topic);
      byFormat.get(d.format()).inc();
      request = d.record();
    } catch (RegistryUnavailableException e) {
      // Not a bad record: fail, and read it again after the restart.
      throw new java.io.UncheckedIOException(e);
    } catch (Exception e) {
      reject(ctx, raw, null, "decode", Rejection.UNDECODABLE, e.getMessage());
      return;
    }
    if (raw.headerProblem != null) {
      reject(ctx, raw, request.getRequestId(), "decode", raw.headerRejection, raw.headerProblem);
      return;
    }
    if (raw.headers != null && !raw.headers.isEmpty()) {
      // Carried headers join the metadata (over entries of the same name), within its limits.
      Map<String, String> metadata = new HashMap<>(request.getMetadata());
      metadata.putAll(raw.headers);
      request.setMetadata(metadata);
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
