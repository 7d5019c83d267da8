package io.flinfer.runtime.forward;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class HeapMemoryTest {
  /**
   * Garbage left by earlier work is not counted as in use: after an eighth of the heap was
   * allocated and dropped, the free memory measured is within a sixteenth of the heap of what it
   * was before (without a collection it would be an eighth less).
   */
  @Test
  void garbageIsNotCountedAsInUse() {
    long limit = Runtime.getRuntime().maxMemory();
    long before = HeapMemory.now().freeBytes();
    long[][] garbage = new long[64][];
    for (int i = 0; i < garbage.length; i++) {
      garbage[i] = new long[(int) (limit / 8 / 64 / Long.BYTES)];
    }
    assertThat(garbage[63]).isNotNull();
    garbage = null;
    DeviceMemory after = HeapMemory.now();
    assertThat(after.totalBytes()).isEqualTo(limit);
    assertThat(after.freeBytes()).isGreaterThan(before - limit / 16);
  }
}
