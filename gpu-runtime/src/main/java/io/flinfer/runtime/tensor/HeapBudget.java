package io.flinfer.runtime.tensor;

/**
 * Whether a compact matrix is copied onto the heap (faster products) or read from the mapped file:
 * copied while the heap keeps a quarter of its maximum free for the KV pool and activations after
 * the copy, so a model larger than the heap still loads (from the mapping) instead of failing.
 * {@code -Dflinfer.weights.heap=false} keeps every matrix mapped.
 */
final class HeapBudget {
  private HeapBudget() {}

  static synchronized boolean admits(long bytes) {
    if ("false".equalsIgnoreCase(System.getProperty("flinfer.weights.heap"))) {
      return false;
    }
    // One matrix is one array, which holds fewer than 2^31 bytes (a heap form may be larger than
    // its file slice: Q6_K's is).
    if (bytes > Integer.MAX_VALUE - 16) {
      return false;
    }
    Runtime rt = Runtime.getRuntime();
    long used = rt.totalMemory() - rt.freeMemory();
    return used + bytes <= rt.maxMemory() - rt.maxMemory() / 4;
  }
}
