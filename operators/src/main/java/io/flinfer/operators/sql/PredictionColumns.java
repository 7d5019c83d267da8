package io.flinfer.operators.sql;

import io.flinfer.operators.predict.Prediction;
import java.io.Serializable;
import java.util.List;
import java.util.Set;
import org.apache.flink.table.api.ValidationException;
import org.apache.flink.table.catalog.Column;
import org.apache.flink.table.catalog.ResolvedSchema;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.types.logical.LogicalTypeRoot;

/**
 * The model's output columns, by name: {@code text} (STRING, null on error), {@code finish_reason}
 * (STRING: length, stop or error), {@code prompt_tokens} and {@code completion_tokens} (INT),
 * {@code error} (STRING, null unless the row could not be answered), and for conversations with a
 * thinking model {@code reasoning_content} (STRING, the thinking, null where there is none) and
 * {@code content} (STRING, the answer after it; the text where there is none). Any subset, in any
 * order.
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
          STRINGS.contains(c.getName())
                  && (root == LogicalTypeRoot.VARCHAR || root == LogicalTypeRoot.CHAR)
              || INTS.contains(c.getName()) && root == LogicalTypeRoot.INTEGER;
      if (!ok) {
        throw new ValidationException(
            "flinfer model output column '"
                + c.getName()
                + "' "
                + c.getDataType()
                + ": the columns are text, finish_reason, error, reasoning_content and content"
                + " (STRING), prompt_tokens and completion_tokens (INT)");
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
            default -> p.completionTokens();
          });
    }
    return row;
  }

  private static StringData string(String s) {
    return s == null ? null : StringData.fromString(s);
  }
}
