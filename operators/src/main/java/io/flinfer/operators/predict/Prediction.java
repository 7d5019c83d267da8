package io.flinfer.operators.predict;

/**
 * What one prompt gave: its completion text, why it ended ({@code length}, {@code stop}, or {@code
 * error} with the reason in {@code error}), its token counts, and, for a conversation with a
 * thinking model, its thinking apart from its answer.
 *
 * @param reasoningContent the thinking, or null where the text has none
 * @param content the answer: the text after the thinking, or all of it where there is none
 */
public record Prediction(
    String text,
    String finishReason,
    int promptTokens,
    int completionTokens,
    String error,
    String reasoningContent,
    String content) {
  static Prediction failed(String error) {
    return new Prediction(null, "error", 0, 0, error, null, null);
  }
}
