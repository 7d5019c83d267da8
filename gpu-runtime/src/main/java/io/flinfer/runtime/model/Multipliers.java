package io.flinfer.runtime.model;

/**
 * Multipliers that replace or add constants of the forward pass: Granite's (GGUF {@code
 * attention.scale}, {@code residual_scale}, {@code logit_scale}; its {@code embedding_scale} is
 * {@link ModelConfig#embeddingScale}), and the query scale of the 27B Gemma 2 and 3, 1/sqrt(dim /
 * heads) instead of the head's.
 *
 * @param attention what a query-key product is multiplied by, instead of 1/sqrt(head)
 * @param residual what the attention's and the feed-forward's outputs are multiplied by before they
 *     join the residual
 * @param logits what the output logits are divided by
 */
public record Multipliers(float attention, float residual, float logits) {
  public Multipliers {
    if (!(attention > 0)
        || !(residual > 0)
        || !(logits > 0)
        || Float.isInfinite(attention + residual + logits)) {
      throw new IllegalArgumentException(
          "multipliers must be finite and positive: "
              + attention
              + ", "
              + residual
              + ", "
              + logits);
    }
  }
}
