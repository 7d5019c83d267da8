package io.flinfer.runtime.sampling;

/**
 * A counter-based random source: the draw for token {@code index} of a request is a pure function
 * of (seed, index). Nothing about it needs saving or restoring, and a request's draws do not depend
 * on what else shares its batch.
 */
public final class CounterRng {
  private CounterRng() {}

  /** A uniform float in [0, 1). */
  public static float uniform(long seed, long index) {
    long z = mix(seed ^ mix(index + 0x9E3779B97F4A7C15L));
    return (z >>> 40) * 0x1.0p-24f;
  }

  /** SplitMix64's finalizer. */
  static long mix(long z) {
    z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
    z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
    return z ^ (z >>> 31);
  }
}
