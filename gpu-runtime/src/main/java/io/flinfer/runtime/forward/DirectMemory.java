package io.flinfer.runtime.forward;

import com.sun.management.HotSpotDiagnosticMXBean;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;

/** The JVM's direct memory, where the CPU backend keeps its KV pool: its limit and what is free. */
final class DirectMemory {
  private DirectMemory() {}

  static DeviceMemory now() {
    long limit = limit();
    long used = 0;
    for (BufferPoolMXBean pool : ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class)) {
      if ("direct".equals(pool.getName())) {
        used = pool.getMemoryUsed();
      }
    }
    return new DeviceMemory(limit, Math.max(0, Math.min(limit, limit - used)));
  }

  /** {@code -XX:MaxDirectMemorySize}, which defaults to the heap's limit. */
  static long limit() {
    try {
      HotSpotDiagnosticMXBean hs =
          ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
      long v = Long.parseLong(hs.getVMOption("MaxDirectMemorySize").getValue());
      if (v > 0) {
        return v;
      }
    } catch (RuntimeException | LinkageError e) {
      // Not HotSpot: fall back to the default rule.
    }
    return Runtime.getRuntime().maxMemory();
  }
}
