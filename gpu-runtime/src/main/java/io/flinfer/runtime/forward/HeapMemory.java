package io.flinfer.runtime.forward;

/**
 * The JVM heap, where the CPU backend keeps its KV pool: its limit ({@code -Xmx}) and what of it is
 * not in use now (garbage counts as in use: the estimate errs on the small side).
 */
final class HeapMemory {
  private HeapMemory() {}

  static DeviceMemory now() {
    Runtime rt = Runtime.getRuntime();
    long limit = rt.maxMemory();
    long used = rt.totalMemory() - rt.freeMemory();
    return new DeviceMemory(limit, Math.max(0, Math.min(limit, limit - used)));
  }
}
