package io.flinfer.memcache;

import java.util.Arrays;

/**
 * The free-grouping shared by the allocators: between {@link #freeGroupBegin()} and {@link
 * #freeGroupEnd()} freed slots are collected and released together. Owns the collected slots;
 * subclasses own the free set itself and release through {@link #release}.
 */
abstract class GroupedFreeAllocator implements TokenToKvPoolAllocator {
  private int[] group = new int[64];
  private int groupLen = -1;

  /** Returns slots to the free set now. */
  protected abstract void release(int[] slots, int from, int len);

  @Override
  public final void free(int[] slots, int from, int len) {
    if (groupLen < 0) {
      release(slots, from, len);
      return;
    }
    if (groupLen + len > group.length) {
      group = Arrays.copyOf(group, Math.max(group.length * 2, groupLen + len));
    }
    System.arraycopy(slots, from, group, groupLen, len);
    groupLen += len;
  }

  @Override
  public final void freeGroupBegin() {
    groupLen = 0;
  }

  @Override
  public final void freeGroupEnd() {
    int len = groupLen;
    groupLen = -1;
    if (len > 0) {
      release(group, 0, len);
    }
  }

  /** Drops a group in progress (on clear). */
  protected final void endGroupWithoutRelease() {
    groupLen = -1;
  }
}
