package io.flinfer.operators.engine;

/**
 * How hard the KV pool is pressed, from the share of it that running requests hold and no eviction
 * can free (used less evictable, over the pool): under half {@link #LOW}, under 80% {@link
 * #MEDIUM}, under 95% {@link #HIGH}, else {@link #CRITICAL} (new prefills wait, and decoding may
 * retract).
 */
public enum MemoryPressure {
  LOW,
  MEDIUM,
  HIGH,
  CRITICAL;

  static MemoryPressure of(int total, int used, int evictable) {
    double held = total == 0 ? 1 : (double) (used - evictable) / total;
    if (held < 0.5) {
      return LOW;
    }
    if (held < 0.8) {
      return MEDIUM;
    }
    return held < 0.95 ? HIGH : CRITICAL;
  }
}
