package io.flinfer.memcache;

/**
 * Hands out KV slots (indices into the KV pool) and takes them back. Owns the free set of slots;
 * never touches K/V data.
 *
 * <p>Slot 0 is reserved as the padding slot that dummy tokens write to, as in SGLang, so a pool of
 * {@code size} usable slots has {@code size + pageSize} rows.
 */
public interface TokenToKvPoolAllocator {

  /** Tokens per page; 1 for the unpaged allocator. */
  int pageSize();

  /** Usable slots in total (the pool's {@code max_total_num_tokens}). */
  int size();

  /** Slots free now. */
  int availableSize();

  /** Takes {@code n} slots, or returns null (taking nothing) when they are not available. */
  int[] alloc(int n);

  /** Returns slots to the free set. */
  void free(int[] slots, int from, int len);

  default void free(int[] slots) {
    free(slots, 0, slots.length);
  }

  /** Starts collecting frees, so that a batch of frees is released as one operation. */
  void freeGroupBegin();

  /** Releases everything freed since {@link #freeGroupBegin()}. */
  void freeGroupEnd();

  /** Frees every slot. */
  void clear();
}
