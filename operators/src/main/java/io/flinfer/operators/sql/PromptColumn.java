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
 * the model's settings (sampling, response format, template switches); a null input gives a record
 * the validator refuses.
 */
final class PromptColumn implements Serializable {
  private final boolean messages;
  private final PromptRequest settings;

  private PromptColumn(boolean messages, PromptRequest settings) {
    this.messages = messages;
    this.settings = settings;
  }

  /**
   * @param settings what every row's record carries (its token limit, sampling, response format,
   *     template switches); a row adds its prompt or messages, and its seed where settings have
   *     none
   */
  static PromptColumn of(ResolvedSchema input, PromptRequest settings) {
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
    if (text) {
      conversationOnly(settings.getChatTemplateKwargs(), "chat-template-kwargs go");
      conversationOnly(settings.getThinkingTokenBudget(), "thinking-token-budget goes");
      conversationOnly(settings.getTools(), "tools go");
    }
    return new PromptColumn(conversation, settings);
  }

  /** Refuses a setting given ({@code value} not null) that only a conversation column takes. */
  private static void conversationOnly(Object value, String what) {
    if (value != null) {
      throw new ValidationException(
          what
              + " with messages ARRAY<ROW<role STRING, content STRING>>, not with a prompt STRING");
    }
  }

  PromptRequest request(RowData row) {
    PromptRequest.Builder r = PromptRequest.newBuilder(settings).setRequestId("row");
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
    if (settings.getSampling().getSeed() == null) {
      r.setSampling(
          SamplingOptions.newBuilder(settings.getSampling())
              .setSeed(RequestValidator.seedOf(input))
              .build());
    }
    return r;
  }
}
