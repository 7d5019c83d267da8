package io.flinfer.operators.sql;

import io.flinfer.avro.ChatMessage;
import io.flinfer.avro.PromptRequest;
import io.flinfer.avro.SamplingOptions;
import io.flinfer.operators.request.RequestValidator;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.table.api.ValidationException;
import org.apache.flink.table.catalog.Column;
import org.apache.flink.table.catalog.ResolvedSchema;
import org.apache.flink.table.data.ArrayData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.LogicalTypeRoot;

/**
 * The model's one input column: a prompt (STRING), or a conversation ({@code ARRAY<ROW<role STRING,
 * content STRING>>}) rendered by the model's chat template. Turns a row into a prompt record with
 * the model's sampling settings and response format; a null input gives a record the validator
 * refuses.
 */
final class PromptColumn implements Serializable {
  private final boolean messages;
  private final int maxTokens;
  private final float temperature;
  private final float topP;
  private final Long seed;
  private final String responseFormat;
  private final String jsonSchema;

  private PromptColumn(
      boolean messages,
      int maxTokens,
      float temperature,
      float topP,
      Long seed,
      String responseFormat,
      String jsonSchema) {
    this.messages = messages;
    this.maxTokens = maxTokens;
    this.temperature = temperature;
    this.topP = topP;
    this.seed = seed;
    this.responseFormat = responseFormat;
    this.jsonSchema = jsonSchema;
  }

  static PromptColumn of(
      ResolvedSchema input,
      int maxTokens,
      double temperature,
      double topP,
      Long seed,
      String responseFormat,
      String jsonSchema) {
    List<Column> columns = input.getColumns();
    LogicalType t = columns.size() == 1 ? columns.get(0).getDataType().getLogicalType() : null;
    boolean text =
        t != null
            && (t.getTypeRoot() == LogicalTypeRoot.VARCHAR
                || t.getTypeRoot() == LogicalTypeRoot.CHAR);
    boolean conversation =
        t != null
            && t.getTypeRoot() == LogicalTypeRoot.ARRAY
            && t.getChildren().get(0).getTypeRoot() == LogicalTypeRoot.ROW
            && t.getChildren().get(0).getChildren().size() == 2;
    if (!text && !conversation) {
      throw new ValidationException(
          "a flinfer model takes one input column: a prompt STRING, or messages"
              + " ARRAY<ROW<role STRING, content STRING>>");
    }
    return new PromptColumn(
        conversation,
        maxTokens,
        (float) temperature,
        (float) topP,
        seed,
        responseFormat,
        jsonSchema);
  }

  PromptRequest request(RowData row) {
    PromptRequest.Builder r =
        PromptRequest.newBuilder()
            .setRequestId("row")
            .setMaxNewTokens(maxTokens)
            .setResponseFormat(responseFormat)
            .setJsonSchema(jsonSchema)
            .setSampling(
                SamplingOptions.newBuilder()
                    .setTemperature(temperature)
                    .setTopP(topP)
                    .setSeed(seed)
                    .build());
    if (row.isNullAt(0)) {
      return r.build(); // neither prompt nor messages: refused with its reason
    }
    if (!messages) {
      String prompt = row.getString(0).toString();
      return withSeed(r.setPrompt(prompt), prompt).build();
    }
    ArrayData a = row.getArray(0);
    List<ChatMessage> out = new ArrayList<>(a.size());
    for (int i = 0; i < a.size(); i++) {
      RowData m = a.getRow(i, 2);
      out.add(
          ChatMessage.newBuilder()
              .setRole(m.isNullAt(0) ? "" : m.getString(0).toString())
              .setContent(m.isNullAt(1) ? "" : m.getString(1).toString())
              .build());
    }
    return withSeed(r.setMessages(out), out.toString()).build();
  }

  /**
   * Without a configured seed a row's seed derives from its input, so that a row sent again (after
   * a failure) is answered with the same text.
   */
  private PromptRequest.Builder withSeed(PromptRequest.Builder r, String input) {
    if (seed == null) {
      r.getSampling().setSeed(RequestValidator.seedOf(input));
    }
    return r;
  }
}
