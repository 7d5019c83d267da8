package io.flinfer.memcache;

import java.util.Arrays;

/**
 * The request-to-token table: for each request slot, the KV slot of every position of its context.
 * Owns the table and the free list of request slots.
 *
 * <p>Attention reads a request's whole context through its row, so KV slots need not be contiguous
 * (SGLang's {@code req_to_token_pool}).
 */
public final class ReqToTokenPool {
  private final int size;
  private final int maxContextLen;
  private final int[] reqToToken;
  private final int[] freeSlots;
  private final int[] dirtyFrom;
  private final boolean[] taken;
  private int freeCount;

  public ReqToTokenPool(int size, int maxContextLen) {
    if (size <= 0 || maxContextLen <= 0) {
      throw new IllegalArgumentException(
          "size and maxContextLen must be positive: " + size + ", " + maxContextLen);
    }
    if ((long) size * maxContextLen > Integer.MAX_VALUE) {
      throw new IllegalArgumentException(
          "request table too large: " + size + " x " + maxContextLen + " entries");
    }
    this.size = size;
    this.maxContextLen = maxContextLen;
    this.reqToToken = new int[size * maxContextLen];
    this.freeSlots = new int[size];
    this.dirtyFrom = new int[size];
    this.taken = new boolean[size];
    clear();
  }

  public int size() {
    return size;
  }

  public int maxContextLen() {
    return maxContextLen;
  }

  public int availableSize() {
    return freeCount;
  }

  /** Takes {@code n} request slots, or returns null when fewer are free. */
  public int[] alloc(int n) {
    if (n > freeCount) {
      return null;
    }
    int[] out = new int[n];
    for (int i = 0; i < n; i++) {
      out[i] = freeSlots[--freeCount];
      taken[out[i]] = true;
    }
    return out;
  }

  /** Takes one request slot, or returns -1 when none is free. */
  public int allocOne() {
    if (freeCount == 0) {
      return -1;
    }
    int slot = freeSlots[--freeCount];
    taken[slot] = true;
    return slot;
  }

  /** Returns a request slot; freeing one that is not taken (twice, or never) is an error. */
  public void free(int slot) {
    checkSlot(slot);
    if (!taken[slot]) {
      throw new IllegalStateException("request slot " + slot + " freed twice, or never taken");
    }
    taken[slot] = false;
    freeSlots[freeCount++] = slot;
  }

  /** Writes {@code len} KV slots from {@code kvSlots[srcOff..]} at positions {@code from..}. */
  public void write(int slot, int from, int[] kvSlots, int srcOff, int len) {
    checkSlot(slot);
    if (from < 0 || from + len > maxContextLen) {
      throw new IndexOutOfBoundsException(
          "positions " + from + ".." + (from + len) + " outside context " + maxContextLen);
    }
    System.arraycopy(kvSlots, srcOff, reqToToken, slot * maxContextLen + from, len);
    if (from < dirtyFrom[slot]) {
      dirtyFrom[slot] = from;
    }
  }

  /**
   * The lowest position of row {@code slot} written since {@link #markSynced}: a device backend
   * that mirrors the table copies the row from there (Integer.MAX_VALUE: nothing written).
   */
  public int dirtyFrom(int slot) {
    checkSlot(slot);
    return dirtyFrom[slot];
  }

  /** Records that a mirror of row {@code slot} now agrees with it. */
  public void markSynced(int slot) {
    checkSlot(slot);
    dirtyFrom[slot] = Integer.MAX_VALUE;
  }

  public void write(int slot, int from, int[] kvSlots) {
    write(slot, from, kvSlots, 0, kvSlots.length);
  }

  /** The KV slot of {@code position} in request slot {@code slot}. */
  public int get(int slot, int position) {
    return reqToToken[slot * maxContextLen + position];
  }

  /** Copies positions {@code [from, from + len)} of a request's row into {@code dst}. */
  public void read(int slot, int from, int len, int[] dst, int dstOff) {
    System.arraycopy(reqToToken, slot * maxContextLen + from, dst, dstOff, len);
  }

  /**
   * The backing table, row-major [slot][position], for kernels that walk a row. Read-only by
   * contract.
   */
  public int[] table() {
    return reqToToken;
  }

  public void clear() {
    Arrays.fill(reqToToken, 0);
    Arrays.fill(dirtyFrom, 0);
    Arrays.fill(taken, false);
    for (int i = 0; i < size; i++) {
      freeSlots[i] = size - 1 - i;
    }
    freeCount = size;
  }

  private void checkSlot(int slot) {
    if (slot < 0 || slot >= size) {
      throw new IndexOutOfBoundsException("request slot " + slot + " outside [0, " + size + ")");
    }
  }
}
