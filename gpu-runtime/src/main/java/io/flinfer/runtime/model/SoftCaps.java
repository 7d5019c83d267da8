package io.flinfer.runtime.model;

/**
 * Soft caps of a model's attention scores and output logits (Gemma 2's {@code
 * attn_logit_softcapping} and {@code final_logit_softcapping}): each is bent into (-cap, cap) by
 * {@code cap * tanh(x / cap)} before the softmax, or before sampling. Zero: not capped.
 *
 * @param attention the attention scores' cap (after the 1/sqrt(head) scale), or 0
 * @param logits the output logits' cap, or 0
 */
public record SoftCaps(float attention, float logits) {
  public SoftCaps {
    if (!(attention >= 0) || !(logits >= 0) || Float.isInfinite(attention + logits)) {
      throw new IllegalArgumentException(
          "soft caps must be finite and non-negative: " + attention + ", " + logits);
    }
  }
}
