package io.flinfer.runtime.forward;

/**
 * Memory a backend reports for KV sizing: what the device has in all and what is free now, in
 * bytes. For the CPU backend, the JVM's direct-memory limit and what of it is unused.
 */
public record DeviceMemory(long totalBytes, long freeBytes) {
  public DeviceMemory {
    if (totalBytes < 0 || freeBytes < 0 || freeBytes > totalBytes) {
      throw new IllegalArgumentException(
          "memory: " + freeBytes + " free of " + totalBytes + " bytes");
    }
  }
}
