package io.flinfer.runtime.cuda;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinfer.memcache.ReqToTokenPool;
import io.flinfer.runtime.forward.ForwardBatch;
import java.util.Arrays;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

/** The step's integers in the layout the kernels read, and the attention work it plans. */
class StepPlanTest {
  private static final int HEADS = 8;
  private static final int KV_HEADS = 2; // groups of 4

  private static int[] header(StepPlan p, int[] data) {
    return Arrays.copyOf(data, StepPlan.HEADER_INTS);
  }

  private static int[] slice(int[] data, int from, int len) {
    return Arrays.copyOfRange(data, from, from + len);
  }

  @Test
  void packsTokensThenEachRequestsLastToken() {
    ReqToTokenPool table = new ReqToTokenPool(4, 1024);
    ForwardBatch b =
        new ForwardBatch()
            .add(3, 5, new int[] {7, 8, 9}, 0, 3, new int[] {40, 41, 42}, 0)
            .add(1, 0, new int[] {11}, 0, 1, new int[] {50}, 0);
    table.markSynced(3);
    table.markSynced(1);
    StepPlan plan = new StepPlan(HEADS, KV_HEADS, 64, 100);
    int[] d = plan.pack(b, table);
    int[] h = header(plan, d);
    assertThat(h[StepPlan.H_N]).isEqualTo(4);
    assertThat(h[StepPlan.H_B]).isEqualTo(2);
    assertThat(slice(d, h[StepPlan.H_IDS], 4)).containsExactly(7, 8, 9, 11);
    assertThat(slice(d, h[StepPlan.H_POS], 4)).containsExactly(5, 6, 7, 0);
    assertThat(slice(d, h[StepPlan.H_LOCS], 4)).containsExactly(40, 41, 42, 50);
    assertThat(slice(d, h[StepPlan.H_ROWS], 4)).containsExactly(3, 3, 3, 1);
    assertThat(slice(d, h[StepPlan.H_LAST], 2)).containsExactly(2, 3);
    assertThat(plan.fixups()).isZero();
    assertThat(plan.length()).isGreaterThanOrEqualTo(h[StepPlan.H_FIXUPS_OFF]);
  }

  @Test
  void packsTheDrawOfEachRequestThatAllowsIt() {
    ReqToTokenPool table = new ReqToTokenPool(4, 1024);
    ForwardBatch b =
        new ForwardBatch()
            .add(3, 5, new int[] {7}, 0, 1, new int[] {40}, 0)
            .drawOnBackend(0.7f, 40, 0.9f, 0.05f, 0.25f)
            .add(1, 0, new int[] {11}, 0, 1, new int[] {50}, 0)
            .greedyOnly()
            .add(2, 0, new int[] {12}, 0, 1, new int[] {51}, 0)
            .drawOnBackend(1.3f, 0, 1f, 0f, 0.999f);
    table.markSynced(3);
    table.markSynced(1);
    table.markSynced(2);
    StepPlan plan = new StepPlan(HEADS, KV_HEADS, 64, 100);
    int[] d = plan.pack(b, table);
    int[] h = header(plan, d);
    assertThat(plan.draws()).isEqualTo(2);
    assertThat(h[StepPlan.H_SAMPLES]).isEqualTo(2);
    int at = h[StepPlan.H_SAMPLES_OFF];
    assertThat(at + 2 * StepPlan.SAMPLE_INTS).isEqualTo(plan.length());
    assertThat(slice(d, at, StepPlan.SAMPLE_INTS))
        .containsExactly(
            0,
            40,
            Float.floatToRawIntBits(0.7f),
            Float.floatToRawIntBits(0.9f),
            Float.floatToRawIntBits(0.05f),
            Float.floatToRawIntBits(0.25f));
    assertThat(slice(d, at + StepPlan.SAMPLE_INTS, StepPlan.SAMPLE_INTS))
        .containsExactly(
            2,
            0,
            Float.floatToRawIntBits(1.3f),
            Float.floatToRawIntBits(1f),
            Float.floatToRawIntBits(0f),
            Float.floatToRawIntBits(0.999f));
  }

  @Test
  void extendTilesCoverEveryTokenAndKvHeadOnceWithTheirSplits() {
    ReqToTokenPool table = new ReqToTokenPool(2, 2048);
    int len = 700;
    int prefix = 100;
    int[] ids = new int[len];
    int[] locs = new int[len];
    ForwardBatch b = new ForwardBatch().add(0, prefix, ids, 0, len, locs, 0);
    table.markSynced(0);
    StepPlan plan = new StepPlan(HEADS, KV_HEADS, 64, 100);
    int[] d = plan.pack(b, table);
    int[] h = header(plan, d);
    assertThat(plan.itemsFewRows()).isZero();
    int[][] covered = new int[KV_HEADS][len];
    for (int i = 0; i < plan.itemsManyRows(); i++) {
      int[] it = slice(d, h[StepPlan.H_ITEMS_B_OFF] + i * StepPlan.ITEM_INTS, StepPlan.ITEM_INTS);
      int t0 = it[0];
      int tokens = it[1];
      assertThat(tokens * (HEADS / KV_HEADS)).isLessThanOrEqualTo(64);
      assertThat(it[3]).isZero();
      assertThat(it[4]).isEqualTo(StepPlan.splits(prefix + t0 + tokens - 1));
      assertThat(it[6]).as("an extend writes its output").isEqualTo(-1);
      for (int t = t0; t < t0 + tokens; t++) {
        covered[it[2]][t]++;
      }
    }
    for (int[] row : covered) {
      assertThat(row).containsOnly(1);
    }
  }

  @Test
  void decodesPastOneSplitAreSplitAcrossItemsAndMergedWhileTheBudgetLasts() {
    ReqToTokenPool table = new ReqToTokenPool(3, 2048);
    int split = StepPlan.SPLIT;
    ForwardBatch b =
        new ForwardBatch()
            .add(0, 2 * split + split / 3, new int[] {1}, 0, 1, new int[] {9}, 0) // 3 splits
            .add(1, split / 2, new int[] {1}, 0, 1, new int[] {8}, 0) // 1 split
            .add(
                2,
                3 * split + split / 2,
                new int[] {1},
                0,
                1,
                new int[] {7},
                0); // 4, past the budget
    for (int r = 0; r < 3; r++) {
      table.markSynced(r);
    }
    StepPlan plan = new StepPlan(HEADS, KV_HEADS, 64, 5);
    int[] d = plan.pack(b, table);
    int[] h = header(plan, d);
    assertThat(plan.itemsManyRows()).isZero();
    // Request 0: 3 splits x 2 KV heads, partial states 0..2; request 1: one item per head;
    // request 2 needs 4 more partial states than the 5 there are: one looping item per head.
    assertThat(plan.itemsFewRows()).isEqualTo(6 + 2 + 2);
    assertThat(plan.combines()).isEqualTo(1);
    assertThat(slice(d, h[StepPlan.H_COMBINE_OFF], 3)).containsExactly(0, 3, 0);
    int[] last = slice(d, h[StepPlan.H_ITEMS_OFF] + 9 * StepPlan.ITEM_INTS, StepPlan.ITEM_INTS);
    assertThat(last[3]).isZero();
    assertThat(last[4]).isEqualTo(4);
    assertThat(last[6]).isEqualTo(-1);
  }

  @Test
  void rowsTheHostChangedBelowThePrefixAreSentAsFixups() {
    ReqToTokenPool table = new ReqToTokenPool(2, 64);
    table.write(1, 0, new int[] {5, 6, 7, 8});
    table.markSynced(1);
    table.write(1, 2, new int[] {17, 18}); // the radix cache swapped two slots
    table.write(0, 0, new int[] {30, 31, 32}); // a new request with a cached prefix of 3
    ForwardBatch b =
        new ForwardBatch()
            .add(1, 4, new int[] {1}, 0, 1, new int[] {9}, 0)
            .add(0, 3, new int[] {2}, 0, 1, new int[] {33}, 0);
    StepPlan plan = new StepPlan(HEADS, KV_HEADS, 64, 10);
    int[] d = plan.pack(b, table);
    int[] h = header(plan, d);
    assertThat(plan.fixups()).isEqualTo(2 + 3);
    assertThat(slice(d, h[StepPlan.H_FIXUPS_OFF], 15))
        .containsExactly(1, 2, 17, 1, 3, 18, 0, 0, 30, 0, 1, 31, 0, 2, 32);
  }

  /**
   * A captured decode step's attention grid: never fewer blocks than multiprocessors (else one
   * token's flash-decoding splits would queue in the few blocks of its KV heads), a block per token
   * and KV head where that is more, and never past eight per multiprocessor.
   */
  @Property
  void graphDecodeGridsSpreadSplitsOverEveryMultiprocessor(
      @ForAll @IntRange(min = 1, max = 4096) int tokens,
      @ForAll @IntRange(min = 1, max = 64) int kvHeads,
      @ForAll @IntRange(min = 1, max = 256) int multiprocessors) {
    int grid = StepPlan.graphDecodeGrid(tokens, kvHeads, multiprocessors);
    assertThat(grid).isGreaterThanOrEqualTo(multiprocessors);
    assertThat(grid).isLessThanOrEqualTo(8 * multiprocessors);
    assertThat(grid).isGreaterThanOrEqualTo(Math.min(tokens * kvHeads, 8 * multiprocessors));
  }

  @Test
  void aOneTokenStepOnAnH100GetsABlockPerMultiprocessor() {
    // Gemma 3 1B: one KV head; before, one block walked all of the token's splits.
    assertThat(StepPlan.graphDecodeGrid(1, 1, 132)).isEqualTo(132);
    assertThat(StepPlan.graphDecodeGrid(256, 8, 132)).isEqualTo(8 * 132);
  }
}
