package io.flinfer.operators.predict;

/**
 * What one prompt gave: its completion text, why it ended ({@code length}, {@code stop}, or {@code
 * error} with the reason in {@code error}), and its token counts.
 */
public record Prediction(
    String text, String finishReason, int promptTokens, int completionTokens, String error) {
  static Prediction failed(String error) {
    return new Prediction(null, "error", 0, 0, error);
  }
}
