package io.flinfer.runtime.kernel;

import io.flinfer.runtime.model.RopeConfig;

/**
 * Precomputed RoPE angles: for each position and pair i of a head, cos and sin of {@code position *
 * frequency(i)} (see {@link RopeConfig#frequency}), computed in double and rounded once. Owns the
 * tables.
 */
public record RopeTable(
    float[] cos, float[] sin, int headDim, int maxPositions, RopeConfig.Style style) {

  /** Adjacent-pair rope with base {@code theta} (Llama 2). */
  public static RopeTable of(int headDim, int maxPositions, float theta) {
    return of(headDim, maxPositions, RopeConfig.normal(theta));
  }

  public static RopeTable of(int headDim, int maxPositions, RopeConfig rope) {
    int half = headDim / 2;
    double[] freq = new double[half];
    for (int i = 0; i < half; i++) {
      freq[i] = rope.frequency(i, headDim);
    }
    float[] cos = new float[maxPositions * half];
    float[] sin = new float[maxPositions * half];
    for (int p = 0; p < maxPositions; p++) {
      for (int i = 0; i < half; i++) {
        double angle = p * freq[i];
        cos[p * half + i] = (float) Math.cos(angle);
        sin[p * half + i] = (float) Math.sin(angle);
      }
    }
    return new RopeTable(cos, sin, headDim, maxPositions, rope.style());
  }

  /** Offset of the pair-element partner of element {@code i}'s pair: 1 or headDim/2. */
  public int pairStride() {
    return style == RopeConfig.Style.NEOX ? headDim / 2 : 1;
  }
}
