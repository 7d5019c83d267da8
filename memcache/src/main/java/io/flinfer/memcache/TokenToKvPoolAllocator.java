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

  /**
   * Slots for the new tokens of a batch of extending requests: request i has {@code prefixLens[i]}
   * tokens in the pool, its last one at slot {@code lastLocs[i]} (ignored when the prefix is
   * empty), and grows to {@code seqLens[i]}. Returns the slots of all new tokens, request by
   * request, or null (taking nothing) when they are not available.
   */
  default int[] allocExtend(int[] prefixLens, int[] seqLens, int[] lastLocs) {
    int total = 0;
    for (int i = 0; i < prefixLens.length; i++) {
      total += seqLens[i] - prefixLens[i];
    }
    return alloc(total);
  }

  /**
   * One slot per decoding request: request i's new token is its {@code seqLens[i]}'th, its previous
   * token at slot {@code lastLocs[i]}. Null (taking nothing) when not available.
   */
  default int[] allocDecode(int[] seqLens, int[] lastLocs) {
    return alloc(seqLens.length);
  }

  /** Slots needed to grow requests as {@link #allocExtend} would, counted without allocating. */
  default int slotsNeededForExtend(int prefixLen, int seqLen) {
    return seqLen - prefixLen;
  }

  /** Returns slots to the free set. A paged allocator frees the whole page of every slot given. */
  void free(int[] slots, int from, int len);

  default void free(int[] slots) {
    free(slots, 0, slots.length);
  }

  /** Starts collecting frees, so that a batch of frees is released as one operation. */
  void freeGroupBegin();

  /** Releases everything freed since {@link #freeGroupBegin()}. */
  void freeGroupEnd();

  /** Whether {@code slot} is free (for invariant checks). */
  boolean isFree(int slot);

  /** Frees every slot. */
  void clear();
}
