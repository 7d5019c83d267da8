package io.flinfer.operators.predict;

import io.flinfer.runtime.chat.ReasoningParser;
import io.flinfer.runtime.chat.ToolCall;
import io.flinfer.runtime.chat.ToolCallFormat;
import java.util.ArrayList;
import java.util.List;

/**
 * What one prompt gave: its completion text, why it ended ({@code length}, {@code stop}, or {@code
 * error} with the reason in {@code error}), its token counts, for a conversation with a thinking
 * model its thinking apart from its answer, and for one with tools the calls its answer makes.
 *
 * @param reasoningContent the thinking, or null where the text has none
 * @param content the answer: the text after the thinking, or all of it where there is none
 * @param toolCalls the calls the answer makes in the model family's own form (cut short by the
 *     token limit: as far as they got), with ids; empty without tools
 * @param promptLogprobs where asked for, each prompt token's log-probability from the second on,
 *     given the tokens before it; else null
 */
public record Prediction(
    String text,
    String finishReason,
    int promptTokens,
    int completionTokens,
    String error,
    String reasoningContent,
    String content,
    List<ToolCall> toolCalls,
    float[] promptLogprobs) {
  static Prediction failed(String error) {
    return new Prediction(null, "error", 0, 0, error, null, null, List.of(), null);
  }

  /** The sum of {@link #promptLogprobs}, the prompt's log-likelihood; null where not asked. */
  public Double promptLogprob() {
    if (promptLogprobs == null) {
      return null;
    }
    double sum = 0;
    for (float v : promptLogprobs) {
      sum += v;
    }
    return sum;
  }

  /**
   * The prediction of a finished request's {@code text}, split by {@code reasoning} (null: all
   * answer), its calls read in the form {@code calls} (null: none), their ids derived from {@code
   * callIds} so that the same input answered alike names them alike.
   */
  static Prediction of(
      String text,
      String reason,
      int promptTokens,
      int tokens,
      ReasoningParser reasoning,
      ToolCallFormat calls,
      String callIds,
      float[] promptLogprobs) {
    ReasoningParser.Split answer =
        reasoning == null ? new ReasoningParser.Split(null, text) : reasoning.split(text);
    List<ToolCall> made = new ArrayList<>();
    if (calls != null) {
      for (ToolCall c : calls.parse(answer.content(), reason.equals("length")).calls()) {
        made.add(c.withId(ToolCall.idFor(callIds, made.size())));
      }
    }
    return new Prediction(
        text,
        reason,
        promptTokens,
        tokens,
        null,
        answer.reasoning(),
        answer.content(),
        List.copyOf(made),
        promptLogprobs);
  }
}
