package io.flinfer.runtime.model;

/** The activation of a gated feed-forward block: {@code act(gate) * up}. */
public enum GatedActivation {
  /** SwiGLU: {@code silu(gate) * up} (Llama, Qwen, Phi-3). */
  SILU,
  /**
   * GeGLU with the tanh approximation of GELU (Gemma), its value rounded through half precision as
   * ggml's CPU backend computes it (see {@code kernel.GeluTable}).
   */
  GELU_TANH
}
