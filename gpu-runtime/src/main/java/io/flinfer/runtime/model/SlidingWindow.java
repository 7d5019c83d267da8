package io.flinfer.runtime.model;

/**
 * Layers that attend to a window of recent positions only (Gemma 3's local layers): every layer but
 * each {@code period}-th, which attends to the whole context. A windowed layer at position p sees
 * positions {@code p - positions + 1 .. p}, and turns them with its own rope.
 *
 * @param positions positions a windowed layer sees, its own included
 * @param period layers {@code period - 1, 2 * period - 1, ...} are global; 0: every layer is
 *     windowed
 * @param rope the windowed layers' rope (Gemma 3: base 10,000 where the global layers use 1e6)
 */
public record SlidingWindow(int positions, int period, RopeConfig rope) {
  public SlidingWindow {
    if (positions <= 0) {
      throw new IllegalArgumentException("a sliding window must be positive: " + positions);
    }
    if (period < 0) {
      throw new IllegalArgumentException("a sliding-window period must not be negative");
    }
    if (rope == null) {
      throw new IllegalArgumentException("the windowed layers' rope is required");
    }
  }

  /** Whether {@code layer} is windowed (llama.cpp's swa pattern: all but each period-th). */
  public boolean covers(int layer) {
    return period == 0 || layer % period < period - 1;
  }

  /** The first position a windowed layer's token at {@code position} sees. */
  public int start(int position) {
    return Math.max(0, position + 1 - positions);
  }

  @Override
  public String toString() {
    return positions + (period == 0 ? "" : " (one layer in " + period + " global)") + " " + rope;
  }
}
