package io.flinfer.runtime.model;

import java.util.Arrays;

/**
 * How a model rotates queries and keys by position. Pair {@code i} of a head turns by {@code
 * position * theta^(-2i / headDim) / freqFactors[i]} (no factors: 1).
 *
 * @param style which elements of a head form the pairs
 * @param theta the base frequency
 * @param freqFactors per-pair divisors of the frequency (Llama 3's {@code rope_freqs}), or null
 */
public record RopeConfig(Style style, float theta, float[] freqFactors) {

  /** Which elements of a head are rotated together. */
  public enum Style {
    /** Adjacent pairs (2i, 2i+1): Llama as Meta released it, llama.cpp's "normal" rope. */
    NORMAL,
    /** The two halves (i, i + headDim/2): GPT-NeoX, Qwen, Phi-3, Gemma. */
    NEOX
  }

  public RopeConfig {
    if (style == null) {
      throw new IllegalArgumentException("rope style is required");
    }
    if (!(theta > 0)) {
      throw new IllegalArgumentException("rope theta must be positive: " + theta);
    }
    if (freqFactors != null) {
      for (float f : freqFactors) {
        if (!(f > 0)) {
          throw new IllegalArgumentException("rope frequency factors must be positive");
        }
      }
      freqFactors = freqFactors.clone();
    }
  }

  public static RopeConfig normal(float theta) {
    return new RopeConfig(Style.NORMAL, theta, null);
  }

  /** The angle per position of pair {@code i} of a head of {@code headDim} values. */
  public double frequency(int i, int headDim) {
    double f = 1.0 / Math.pow(theta, (2.0 * i) / headDim);
    return freqFactors == null ? f : f / freqFactors[i];
  }

  @Override
  public float[] freqFactors() {
    return freqFactors == null ? null : freqFactors.clone();
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof RopeConfig r
        && r.style == style
        && Float.compare(r.theta, theta) == 0
        && Arrays.equals(r.freqFactors, freqFactors);
  }

  @Override
  public int hashCode() {
    return 31 * (31 * style.hashCode() + Float.hashCode(theta)) + Arrays.hashCode(freqFactors);
  }

  @Override
  public String toString() {
    return style.name().toLowerCase()
        + " theta="
        + theta
        + (freqFactors == null ? "" : " factors=" + Arrays.toString(freqFactors));
  }
}
