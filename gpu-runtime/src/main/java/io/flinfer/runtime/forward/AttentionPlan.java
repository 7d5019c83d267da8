package io.flinfer.runtime.forward;

import java.util.Arrays;

/**
 * How one forward pass's attention is split into units of work, planned once for all layers:
 *
 * <ul>
 *   <li>an <b>extend tile</b>: the query heads of a GQA group for consecutive tokens of one extend;
 *   <li>a <b>shared-prefix tile</b>: the query heads of a GQA group for one token each of several
 *       requests (decoding) whose contexts begin with the same slots, as the radix cache shares a
 *       system prompt: each shared key and value is read once for all of them;
 *   <li>a <b>token</b>: one token's query heads of a run of KV heads.
 * </ul>
 *
 * Every kind gives a token the same bits, so the plan changes speed only.
 */
final class AttentionPlan {
  static final int TOKEN = 0;
  static final int EXTEND_TILE = 1;
  static final int SHARED_TILE = 2;

  /**
   * Fewer queries per KV head than this are not worth a tile: whatever its fill, a tile costs about
   * three one-query passes on 8-wide heads and six on 64-wide ones.
   */
  static final int MIN_TILE_QUERIES = 6;

  /** Fewer shared positions than this are not worth a shared-prefix tile. */
  static final int MIN_SHARED_POSITIONS = 8;

  private final int kvHeads;
  private final int group;
  private final int tokensPerTile;
  private final boolean tokenKernel;
  private final boolean sharedTiles;
  private final int threads;

  int units;
  int[] kind = new int[64];
  int[] token = new int[64];
  int[] tokens = new int[64];
  int[] kvHead = new int[64];
  int[] kvHeadCount = new int[64];
  int[] shared = new int[64];

  /** A shared-prefix tile's requests: {@code members[token[u] .. token[u] + tokens[u])}. */
  int[] members = new int[16];

  private int memberCount;
  private long[] order = new long[16];
  private boolean[] covered = new boolean[16];

  /**
   * @param tokensPerTile tokens of one request in an extend tile ({@code LANES / group}); 0 when
   *     tiles cannot serve the KV pool
   * @param tokenKernel whether tokens attend all their heads in one pass (else one KV head a unit)
   * @param sharedTiles whether decodes behind a common prefix may share tiles
   */
  AttentionPlan(
      int kvHeads,
      int group,
      int tokensPerTile,
      boolean tokenKernel,
      boolean sharedTiles,
      int threads) {
    this.kvHeads = kvHeads;
    this.group = group;
    this.tokensPerTile = tokensPerTile;
    this.tokenKernel = tokenKernel;
    this.sharedTiles = sharedTiles;
    this.threads = threads;
  }

  /**
   * @param parallel whether the units will be spread over threads; if not, a token's heads are
   *     never split
   */
  void plan(ForwardBatch batch, int[] table, int maxContext, boolean parallel) {
    units = 0;
    memberCount = 0;
    int n = batch.batchSize();
    if (covered.length < n) {
      covered = new boolean[n];
      order = new long[n];
    }
    Arrays.fill(covered, 0, n, false);
    planSharedTiles(batch, table, maxContext);
    int single = 0;
    for (int r = 0; r < n; r++) {
      if (!covered[r] && !extendTiled(batch.extendLen(r))) {
        single += batch.extendLen(r);
      }
    }
    // A token's heads are split into runs only when too few tokens would keep every thread busy:
    // a run narrower than eight heads leaves vector lanes idle.
    int run = tokenKernel ? kvHeads : 1;
    if (tokenKernel && parallel && single > 0) {
      int runs = Math.min(kvHeads, Math.max(1, (2 * threads + single - 1) / single));
      run = (kvHeads + runs - 1) / runs;
    }
    for (int r = 0; r < n; r++) {
      if (covered[r]) {
        continue;
      }
      int len = batch.extendLen(r);
      boolean tiled = extendTiled(len);
      int step = tiled ? tokensPerTile : 1;
      int heads = tiled ? 1 : run;
      for (int t = 0; t < len; t += step) {
        for (int h = 0; h < kvHeads; h += heads) {
          add(
              tiled ? EXTEND_TILE : TOKEN,
              batch.tokenOffset(r) + t,
              Math.min(step, len - t),
              h,
              Math.min(heads, kvHeads - h),
              0);
        }
      }
    }
  }

  private boolean extendTiled(int extendLen) {
    return tokensPerTile > 0 && extendLen * group >= MIN_TILE_QUERIES;
  }

  /**
   * Groups single-token requests by their first slot and, a tile's worth at a time, measures the
   * prefix their rows share; a tile is worth it when that prefix is at least half their contexts.
   */
  private void planSharedTiles(ForwardBatch batch, int[] table, int maxContext) {
    if (tokensPerTile == 0 || !sharedTiles) {
      return;
    }
    int candidates = 0;
    for (int r = 0; r < batch.batchSize(); r++) {
      if (batch.extendLen(r) == 1 && batch.prefixLen(r) > 0) {
        long first = table[batch.reqPoolIdx(r) * maxContext];
        order[candidates++] = first << 32 | r;
      }
    }
    Arrays.sort(order, 0, candidates);
    int perTile = tokensPerTile;
    for (int i = 0; i < candidates; ) {
      int end = i;
      while (end < candidates && order[end] >>> 32 == order[i] >>> 32) {
        end++;
      }
      for (int s = i; s < end; s += perTile) {
        int count = Math.min(perTile, end - s);
        if (count * group >= MIN_TILE_QUERIES) {
          tryTile(batch, table, maxContext, s, count);
        }
      }
      i = end;
    }
  }

  private void tryTile(ForwardBatch batch, int[] table, int maxContext, int from, int count) {
    int first = (int) order[from];
    int base = batch.reqPoolIdx(first) * maxContext;
    int common = Integer.MAX_VALUE;
    long contexts = 0;
    for (int m = 0; m < count; m++) {
      int r = (int) order[from + m];
      // A token's own position is never shared: it was just allocated.
      common = Math.min(common, batch.prefixLen(r));
      contexts += batch.prefixLen(r) + 1;
    }
    for (int m = 1; m < count && common > 0; m++) {
      int row = batch.reqPoolIdx((int) order[from + m]) * maxContext;
      int j = 0;
      while (j < common && table[row + j] == table[base + j]) {
        j++;
      }
      common = j;
    }
    if (common < MIN_SHARED_POSITIONS || 2L * common * count < contexts) {
      return;
    }
    if (memberCount + count > members.length) {
      members = Arrays.copyOf(members, Math.max(2 * members.length, memberCount + count));
    }
    for (int m = 0; m < count; m++) {
      int r = (int) order[from + m];
      members[memberCount + m] = r;
      covered[r] = true;
    }
    for (int h = 0; h < kvHeads; h++) {
      add(SHARED_TILE, memberCount, count, h, 1, common);
    }
    memberCount += count;
  }

  private void add(int k, int tok, int toks, int head, int heads, int prefix) {
    if (units == kind.length) {
      int grown = units * 2;
      kind = Arrays.copyOf(kind, grown);
      token = Arrays.copyOf(token, grown);
      tokens = Arrays.copyOf(tokens, grown);
      kvHead = Arrays.copyOf(kvHead, grown);
      kvHeadCount = Arrays.copyOf(kvHeadCount, grown);
      shared = Arrays.copyOf(shared, grown);
    }
    kind[units] = k;
    token[units] = tok;
    tokens[units] = toks;
    kvHead[units] = head;
    kvHeadCount[units] = heads;
    shared[units] = prefix;
    units++;
  }
}
