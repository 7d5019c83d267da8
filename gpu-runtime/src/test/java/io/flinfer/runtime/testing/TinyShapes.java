package io.flinfer.runtime.testing;

import io.flinfer.runtime.model.ModelConfig;
import io.flinfer.runtime.model.Multipliers;
import io.flinfer.runtime.model.RopeConfig;

/**
 * A small Llama-layout description for tests, and the families' layouts derived from it: {@code
 * layers} layers 64 wide, four heads of 16 over two KV heads, a 192-wide feed-forward, a 600-token
 * vocabulary, 512 positions.
 */
public final class TinyShapes {
  private TinyShapes() {}

  /** Llama's layout: rope base 10,000 in adjacent pairs, SwiGLU, RMS epsilon 1e-5. */
  public static ModelConfig llama(int layers) {
    return new ModelConfig(
        "llama",
        64,
        192,
        layers,
        4,
        2,
        16,
        600,
        512,
        1e-5f,
        new RopeConfig(RopeConfig.Style.NORMAL, 1e4f, null),
        false,
        false);
  }

  /**
   * Granite's layout: Llama's with the embedding times {@code embedding} and the given multipliers.
   */
  public static ModelConfig granite(int layers, float embedding, Multipliers multipliers) {
    return llama(layers).toBuilder()
        .architecture("granite")
        .embeddingScale(embedding)
        .multipliers(multipliers)
        .build();
  }
}
