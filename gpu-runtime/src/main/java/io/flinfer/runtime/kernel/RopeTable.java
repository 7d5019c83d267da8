package io.flinfer.runtime.kernel;

/**
 * Precomputed RoPE angles: for each position and pair i of a head, cos and sin of {@code position *
 * theta^(-2i / headDim)}. Owns the tables.
 */
public record RopeTable(float[] cos, float[] sin, int headDim, int maxPositions) {

  public static RopeTable of(int headDim, int maxPositions, float theta) {
    int half = headDim / 2;
    float[] cos = new float[maxPositions * half];
    float[] sin = new float[maxPositions * half];
    for (int p = 0; p < maxPositions; p++) {
      for (int i = 0; i < half; i++) {
        double freq = 1.0 / Math.pow(theta, (2.0 * i) / headDim);
        double angle = p * freq;
        cos[p * half + i] = (float) Math.cos(angle);
        sin[p * half + i] = (float) Math.sin(angle);
      }
    }
    return new RopeTable(cos, sin, headDim, maxPositions);
  }
}
