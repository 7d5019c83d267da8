package io.flinfer.operators.sql;

import io.flinfer.operators.predict.Prediction;
import io.flinfer.runtime.chat.ToolCall;
import java.io.Serializable;
import java.util.List;
import java.util.Set;
import org.apache.flink.table.api.ValidationException;
import org.apache.flink.table.catalog.Column;
import org.apache.flink.table.catalog.ResolvedSchema;
import org.apache.flink.table.data.ArrayData;
import org.apache.flink.table.data.GenericArrayData;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.LogicalTypeRoot;

/**
 * The model's output columns, by name: {@code text} (STRING, null on error), {@code finish_reason}
 * (STRING: length, stop or error), {@code prompt_tokens} and {@code completion_tokens} (INT),
 * {@code error} (STRING, null unless the row could not be answered), and for conversations with a
 * thinking model {@code reasoning_content} (STRING, the thinking, null where there is none) and
 * {@code content} (STRING, the answer after it; the text where there is none), and for
 * conversations with tools {@code tool_calls} ({@code ARRAY<ROW<id STRING, name STRING, arguments
 * STRING>>}, the calls the answer makes; empty where it makes none), and the prompt's scores:
 * {@code prompt_logprobs} ({@code ARRAY<FLOAT>}, each prompt token's log-probability from the
 * second on, given the tokens before it) and {@code prompt_logprob} ({@code DOUBLE}, their sum: the
 * prompt's log-likelihood). Any subset, in any order.
 */
final class PredictionColumns implements Serializable {
  private static final Set<String> STRINGS =
      Set.of("text", "finish_reason", "error", "reasoning_content", "content");
  private static final Set<String> INTS = Set.of("prompt_tokens", "completion_tokens");

  private final String[] names;

  private PredictionColumns(String[] names) {
    this.names = names;
  }

  static PredictionColumns of(ResolvedSchema output) {
    List<Column> columns = output.getColumns();
    String[] names = new String[columns.size()];
    for (int i = 0; i < names.length; i++) {
      Column c = columns.get(i);
      LogicalTypeRoot root = c.getDataType().getLogicalType().getTypeRoot();
      boolean ok =
          STRINGS.contains(c.getName()) && isString(c.getDataType().getLogicalType())
              || INTS.contains(c.getName()) && root == LogicalTypeRoot.INTEGER
              || c.getName().equals("tool_calls") && isCalls(c.getDataType().getLogicalType())
              || c.getName().equals("prompt_logprob") && root == LogicalTypeRoot.DOUBLE
              || c.getName().equals("prompt_logprobs")
                  && isFloats(c.getDataType().getLogicalType());
      if (!ok) {
        throw new ValidationException(
            "flinfer model output column '"
                + c.getName()
                + "' "
                + c.getDataType()
                + ": the columns are text, finish_reason, error, reasoning_content and content"
                + " (STRING), prompt_tokens and completion_tokens (INT), tool_calls"
                + " (ARRAY<ROW<id STRING, name STRING, arguments STRING>>), prompt_logprobs"
                + " (ARRAY<FLOAT>) and prompt_logprob (DOUBLE)");
      }
      names[i] = c.getName();
    }
    return new PredictionColumns(names);
  }

  RowData row(Prediction p) {
    GenericRowData row = new GenericRowData(names.length);
    for (int i = 0; i < names.length; i++) {
      row.setField(
          i,
          switch (names[i]) {
            case "text" -> string(p.text());
            case "finish_reason" -> string(p.finishReason());
            case "error" -> string(p.error());
            case "reasoning_content" -> string(p.reasoningContent());
            case "content" -> string(p.content());
            case "prompt_tokens" -> p.promptTokens();
            case "tool_calls" -> calls(p.toolCalls());
            case "prompt_logprobs" ->
                p.promptLogprobs() == null ? null : new GenericArrayData(p.promptLogprobs());
            case "prompt_logprob" -> p.promptLogprob();
            default -> p.completionTokens();
          });
    }
    return row;
  }

  /** Whether the rows need the prompt's log-probabilities. */
  boolean scoresPrompt() {
    for (String n : names) {
      if (n.equals("prompt_logprobs") || n.equals("prompt_logprob")) {
        return true;
      }
    }
    return false;
  }

  private static boolean isFloats(LogicalType t) {
    return t.getTypeRoot() == LogicalTypeRoot.ARRAY
        && t.getChildren().get(0).getTypeRoot() == LogicalTypeRoot.FLOAT;
  }

  private static boolean isString(LogicalType t) {
    return t.getTypeRoot() == LogicalTypeRoot.VARCHAR || t.getTypeRoot() == LogicalTypeRoot.CHAR;
  }

  /** {@code ARRAY<ROW<id STRING, name STRING, arguments STRING>>}, the fields by position. */
  private static boolean isCalls(LogicalType t) {
    if (t.getTypeRoot() != LogicalTypeRoot.ARRAY) {
      return false;
    }
    LogicalType row = t.getChildren().get(0);
    return row.getTypeRoot() == LogicalTypeRoot.ROW
        && row.getChildren().size() == 3
        && row.getChildren().stream().allMatch(PredictionColumns::isString);
  }

  /** The calls as rows of (id, name, arguments); null for a row that failed. */
  private static ArrayData calls(List<ToolCall> calls) {
    if (calls == null) {
      return null;
    }
    RowData[] rows = new RowData[calls.size()];
    for (int i = 0; i < rows.length; i++) {
      ToolCall c = calls.get(i);
      rows[i] = GenericRowData.of(string(c.id()), string(c.name()), string(c.arguments()));
    }
    return new GenericArrayData(rows);
  }

  private static StringData string(String s) {
    return s == null ? null : StringData.fromString(s);
  }
}
