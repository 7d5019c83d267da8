package io.flinfer.runtime.testing;

import io.flinfer.runtime.model.GatedActivation;
import io.flinfer.runtime.model.ModelConfig;
import io.flinfer.runtime.model.RopeConfig;
import io.flinfer.runtime.model.SlidingWindow;
import io.flinfer.runtime.model.SoftCaps;

/** Small model descriptions in Gemma 3's and Gemma 2's layouts for tests. */
public final class GemmaShapes {
  private GemmaShapes() {}

  /**
   * Six layers 64 wide (heads of 32, two KV heads, a 600-token vocabulary), global rope base 1e6,
   * with {@code layers} of them and the given windowed layers (or none).
   */
  public static ModelConfig tiny(int layers, SlidingWindow window) {
    return tiny(layers, window, 2, 32);
  }

  /**
   * As {@link #tiny(int, SlidingWindow)} with four query heads over {@code kvHeads} KV heads of
   * {@code headDim} values each (Gemma 3 1B: one KV head, heads of 256, wider than the model).
   */
  public static ModelConfig tiny(int layers, SlidingWindow window, int kvHeads, int headDim) {
    return new ModelConfig(
        "gemma3",
        64,
        192,
        layers,
        4,
        kvHeads,
        headDim,
        600,
        512,
        1e-6f,
        new RopeConfig(RopeConfig.Style.NEOX, 1e6f, null),
        false,
        true,
        8f,
        GatedActivation.GELU_TANH,
        true,
        window,
        null,
        null);
  }

  /** Gemma 1's layout: {@link #gemma2}'s without post norms, windows or caps. */
  public static ModelConfig gemma1(int layers) {
    return gemma2(layers, 8, 1f, 1f).toBuilder()
        .architecture("gemma")
        .postNorms(false)
        .slidingWindow(null)
        .softCaps(null)
        .build();
  }

  /**
   * Gemma 2's layout: {@code layers} layers 64 wide (four heads of 16 over two KV heads, no q/k
   * norms, a 600-token vocabulary), every other layer from the first windowed to {@code window}
   * positions with the global rope (base 10,000), the scores and logits soft-capped at the given
   * caps.
   */
  public static ModelConfig gemma2(int layers, int window, float scoreCap, float logitCap) {
    RopeConfig rope = new RopeConfig(RopeConfig.Style.NEOX, 1e4f, null);
    return TinyShapes.llama(layers).toBuilder()
        .architecture("gemma2")
        .normEps(1e-6f)
        .rope(rope)
        .embeddingScale(8f)
        .activation(GatedActivation.GELU_TANH)
        .postNorms(true)
        .slidingWindow(new SlidingWindow(window, 2, rope))
        .softCaps(new SoftCaps(scoreCap, logitCap))
        .build();
  }
}
