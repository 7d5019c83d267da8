package io.flinfer.runtime.testing;

import io.flinfer.runtime.model.GatedActivation;
import io.flinfer.runtime.model.ModelConfig;
import io.flinfer.runtime.model.Multipliers;
import io.flinfer.runtime.model.RopeConfig;

/** Small model descriptions in Granite's layout (Llama's, with its multipliers) for tests. */
public final class GraniteShapes {
  private GraniteShapes() {}

  /**
   * {@code layers} layers 64 wide (four heads of 16 over two KV heads, a 600-token vocabulary), the
   * embedding times {@code embedding} and the given multipliers (or none: plain Llama).
   */
  public static ModelConfig tiny(int layers, float embedding, Multipliers multipliers) {
    return new ModelConfig(
        multipliers == null ? "llama" : "granite",
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
        false,
        embedding,
        GatedActivation.SILU,
        false,
        null,
        null,
        multipliers);
  }
}
