package io.flinfer.memcache;

import java.util.Arrays;

/**
 * The page-size-1 allocator: a free list of single KV slots. Owns the free list and a bitmap that
 * catches double frees.
 */
public final class SimpleTokenToKvPoolAllocator extends GroupedFreeAllocator {
  private final int size;
  private final int[] freeList;
  private int freeCount;
  private final boolean[] isFree;

  /** A pool of {@code size} usable slots, numbered 1..size (slot 0 is the padding slot). */
  public SimpleTokenToKvPoolAllocator(int size) {
    if (size <= 0) {
      throw new IllegalArgumentException("size must be positive: " + size);
    }
    this.size = size;
    this.freeList = new int[size];
    this.isFree = new boolean[size + 1];
    clear();
  }

  @Override
  public int pageSize() {
    return 1;
  }

  @Override
  public int size() {
    return size;
  }

  @Override
  public int availableSize() {
    return freeCount;
  }

  @Override
  public int[] alloc(int n) {
    if (n > freeCount) {
      return null;
    }
    int[] out = new int[n];
    for (int i = 0; i < n; i++) {
      int slot = freeList[--freeCount];
      isFree[slot] = false;
      out[i] = slot;
    }
    return out;
  }

  @Override
  protected void release(int[] slots, int from, int len) {
    for (int i = from; i < from + len; i++) {
      int slot = slots[i];
      if (slot <= 0 || slot > size) {
        throw new IllegalArgumentException("not a KV slot of this pool: " + slot);
      }
      if (isFree[slot]) {
        throw new IllegalStateException("KV slot freed twice: " + slot);
      }
      isFree[slot] = true;
      freeList[freeCount++] = slot;
    }
  }

  @Override
  public boolean isFree(int slot) {
    return slot > 0 && slot <= size && isFree[slot];
  }

  @Override
  public void clear() {
    // Hand out low slots first so that a fresh pool fills from the front.
    for (int i = 0; i < size; i++) {
      freeList[i] = size - i;
    }
    freeCount = size;
    Arrays.fill(isFree, true);
    isFree[0] = false;
    endGroupWithoutRelease();
  }
}
