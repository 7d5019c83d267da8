package io.flinfer.runtime.cuda;

import io.flinfer.memcache.ReqToTokenPool;
import io.flinfer.runtime.forward.ForwardBatch;
import java.util.Arrays;

/**
 * Everything one forward step needs on the device, packed into one int array for a single upload: a
 * header of counts and offsets (the layout {@code flinfer_kernels.cu} reads), the tokens' ids,
 * positions, {@code out_cache_loc} and request-table rows, each request's last token, the attention
 * work, and the request-table entries the host changed below a request's prefix. Owns a reusable
 * array.
 *
 * <p>Attention work: an extend's queries go in tiles of consecutive tokens times the GQA group of
 * one KV head, each looping over every split of its context; a decode token whose context spans
 * several splits gets one item per split (flash-decoding) while the partial-state budget lasts,
 * then a combine entry that merges them. Either way a token's output is the same bits.
 *
 * <p>Draws: each request the batch lets the backend draw for ({@link ForwardBatch#drawOnBackend})
 * has an entry of {@link #SAMPLE_INTS} ints: its index in the batch, top-k, then the bits of its
 * temperature, top-p, min-p and uniform draw.
 */
final class StepPlan {
  static final int H_N = 0;
  static final int H_B = 1;
  static final int H_ITEMS = 2;
  static final int H_COMBINE = 3;
  static final int H_FIXUPS = 4;
  static final int H_ITEMS_B = 5;
  static final int H_SAMPLES = 6;
  static final int H_IDS = 8;
  static final int H_POS = 9;
  static final int H_LOCS = 10;
  static final int H_ROWS = 11;
  static final int H_LAST = 12;
  static final int H_ITEMS_OFF = 13;
  static final int H_COMBINE_OFF = 14;
  static final int H_FIXUPS_OFF = 15;
  static final int H_ITEMS_B_OFF = 16;
  static final int H_SAMPLES_OFF = 17;
  static final int HEADER_INTS = 24;
  static final int ITEM_INTS = 8;
  static final int SAMPLE_INTS = 6;

  /** Positions per KV split (the kernels' SPLIT). */
  static final int SPLIT = 64;

  /** Query rows of the few-rows attention kernel. */
  static final int FEW_ROWS = 8;

  private final int kvHeads;
  private final int group;
  private final int manyRows;
  private final int partialCapacity;
  private int[] data = new int[1024];
  private int length;
  private int[] itemsA = new int[256];
  private int[] itemsB = new int[256];
  private int[] combine = new int[64];
  private int[] fixups = new int[64];
  private int countA;
  private int countB;
  private int combines;
  private int fixupCount;
  private int draws;

  /**
   * @param manyRows query rows of the many-rows kernel (its tile: tokens x group)
   * @param partialCapacity (token, split) states the flash-decoding buffer holds
   */
  StepPlan(int heads, int kvHeads, int manyRows, int partialCapacity) {
    this.kvHeads = kvHeads;
    this.group = heads / kvHeads;
    this.manyRows = manyRows;
    this.partialCapacity = partialCapacity;
    if (group > manyRows) {
      throw new IllegalArgumentException(
          "a GQA group of " + group + " query heads exceeds the " + manyRows + "-row tiles");
    }
  }

  /**
   * Blocks of a captured decode step's attention launch for {@code tokens} tokens on {@code
   * multiprocessors}: the grid is fixed at capture while the split items grow with the context, so
   * at least one block per multiprocessor lets one token's flash-decoding splits run side by side
   * (blocks past the items exit at once); at least a block per token and KV head, at most eight per
   * multiprocessor (the blocks loop over the items).
   */
  static int graphDecodeGrid(int tokens, int kvHeads, int multiprocessors) {
    return Math.min(Math.max(tokens * kvHeads, multiprocessors), 8 * multiprocessors);
  }

  /** Splits of the context of a token at {@code position}. */
  static int splits(int position) {
    return position / SPLIT + 1;
  }

  /** Packs {@code batch}; returns the array, valid up to {@link #length()}. */
  int[] pack(ForwardBatch batch, ReqToTokenPool reqToToken) {
    int n = batch.numTokens();
    int b = batch.batchSize();
    countA = countB = combines = fixupCount = 0;
    int partials = 0;
    int tileTokens = Math.max(1, manyRows / group);
    for (int r = 0; r < b; r++) {
      int t0 = batch.tokenOffset(r);
      int len = batch.extendLen(r);
      int row = batch.reqPoolIdx(r);
      addFixups(row, batch.prefixLen(r), reqToToken);
      if (len == 1) {
        int splits = splits(batch.position(t0));
        boolean parallel = splits > 1 && partials + splits <= partialCapacity;
        for (int h = 0; h < kvHeads; h++) {
          if (parallel) {
            for (int s = 0; s < splits; s++) {
              addItem(t0, 1, h, s, s + 1, row, partials);
            }
          } else {
            addItem(t0, 1, h, 0, splits, row, -1);
          }
        }
        if (parallel) {
          addCombine(t0, splits, partials);
          partials += splits;
        }
      } else {
        for (int h = 0; h < kvHeads; h++) {
          for (int t = t0; t < t0 + len; t += tileTokens) {
            int nt = Math.min(tileTokens, t0 + len - t);
            addItem(t, nt, h, 0, splits(batch.position(t + nt - 1)), row, -1);
          }
        }
      }
    }
    draws = 0;
    for (int r = 0; r < b; r++) {
      if (batch.isDrawnOnBackend(r)) {
        draws++;
      }
    }
    length =
        HEADER_INTS
            + 4 * n
            + b
            + (countA + countB) * ITEM_INTS
            + combines * 3
            + fixupCount * 3
            + draws * SAMPLE_INTS;
    if (data.length < length) {
      data = new int[Math.max(length, data.length * 2)];
    }
    Arrays.fill(data, 0, HEADER_INTS, 0);
    data[H_N] = n;
    data[H_B] = b;
    data[H_ITEMS] = countA;
    data[H_ITEMS_B] = countB;
    data[H_COMBINE] = combines;
    data[H_FIXUPS] = fixupCount;
    data[H_SAMPLES] = draws;
    int at = HEADER_INTS;
    data[H_IDS] = at;
    data[H_POS] = at + n;
    data[H_LOCS] = at + 2 * n;
    data[H_ROWS] = at + 3 * n;
    for (int t = 0; t < n; t++) {
      data[at + t] = batch.inputId(t);
      data[at + n + t] = batch.position(t);
      data[at + 2 * n + t] = batch.outCacheLoc(t);
      data[at + 3 * n + t] = batch.reqPoolIdx(batch.tokenRequest(t));
    }
    at += 4 * n;
    data[H_LAST] = at;
    for (int r = 0; r < b; r++) {
      data[at + r] = batch.tokenOffset(r) + batch.extendLen(r) - 1;
    }
    at += b;
    data[H_ITEMS_OFF] = at;
    System.arraycopy(itemsA, 0, data, at, countA * ITEM_INTS);
    at += countA * ITEM_INTS;
    data[H_ITEMS_B_OFF] = at;
    System.arraycopy(itemsB, 0, data, at, countB * ITEM_INTS);
    at += countB * ITEM_INTS;
    data[H_COMBINE_OFF] = at;
    System.arraycopy(combine, 0, data, at, combines * 3);
    at += combines * 3;
    data[H_FIXUPS_OFF] = at;
    System.arraycopy(fixups, 0, data, at, fixupCount * 3);
    at += fixupCount * 3;
    data[H_SAMPLES_OFF] = at;
    for (int r = 0; r < b; r++) {
      if (batch.isDrawnOnBackend(r)) {
        data[at] = r;
        data[at + 1] = batch.drawTopK(r);
        data[at + 2] = Float.floatToRawIntBits(batch.drawTemperature(r));
        data[at + 3] = Float.floatToRawIntBits(batch.drawTopP(r));
        data[at + 4] = Float.floatToRawIntBits(batch.drawMinP(r));
        data[at + 5] = Float.floatToRawIntBits(batch.drawU(r));
        at += SAMPLE_INTS;
      }
    }
    return data;
  }

  int length() {
    return length;
  }

  int itemsFewRows() {
    return countA;
  }

  int itemsManyRows() {
    return countB;
  }

  int combines() {
    return combines;
  }

  int fixups() {
    return fixupCount;
  }

  /** Requests whose token the device draws. */
  int draws() {
    return draws;
  }

  /** Entries the host wrote below this request's prefix since the device last saw its row. */
  private void addFixups(int row, int prefixLen, ReqToTokenPool reqToToken) {
    int from = reqToToken.dirtyFrom(row);
    for (int p = from; p < prefixLen; p++) {
      if (fixups.length < (fixupCount + 1) * 3) {
        fixups = Arrays.copyOf(fixups, fixups.length * 2);
      }
      fixups[fixupCount * 3] = row;
      fixups[fixupCount * 3 + 1] = p;
      fixups[fixupCount * 3 + 2] = reqToToken.get(row, p);
      fixupCount++;
    }
  }

  private void addItem(int t0, int tokens, int kvHead, int s0, int s1, int row, int partialBase) {
    boolean few = tokens * group <= FEW_ROWS;
    int count = few ? countA : countB;
    int[] list = few ? itemsA : itemsB;
    if (list.length < (count + 1) * ITEM_INTS) {
      list = Arrays.copyOf(list, list.length * 2);
      if (few) {
        itemsA = list;
      } else {
        itemsB = list;
      }
    }
    int o = count * ITEM_INTS;
    list[o] = t0;
    list[o + 1] = tokens;
    list[o + 2] = kvHead;
    list[o + 3] = s0;
    list[o + 4] = s1;
    list[o + 5] = row;
    list[o + 6] = partialBase;
    list[o + 7] = 0;
    if (few) {
      countA++;
    } else {
      countB++;
    }
  }

  private void addCombine(int token, int splits, int base) {
    if (combine.length < (combines + 1) * 3) {
      combine = Arrays.copyOf(combine, combine.length * 2);
    }
    combine[combines * 3] = token;
    combine[combines * 3 + 1] = splits;
    combine[combines * 3 + 2] = base;
    combines++;
  }
}
