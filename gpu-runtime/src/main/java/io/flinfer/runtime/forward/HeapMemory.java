package io.flinfer.runtime.forward;

/**
 * The JVM heap, where the CPU backend keeps its KV pool: its limit ({@code -Xmx}) and what of it is
 * not in use now, measured after a collection. Uncollected garbage would count as in use: in a JVM
 * that ran other work before (a TaskManager that served another job, say) a pool sized from that
 * would be smaller than the heap allows, or not fit at all, and a job restarted on the same heap
 * would measure the same and fail again.
 */
final class HeapMemory {
  private HeapMemory() {}

  static DeviceMemory now() {
    System.gc(); // once per engine sized from memory: the garbage is not the pool's to lose
    Runtime rt = Runtime.getRuntime();
    long limit = rt.maxMemory();
    long used = rt.totalMemory() - rt.freeMemory();
    return new DeviceMemory(limit, Math.max(0, Math.min(limit, limit - used)));
  }
}
