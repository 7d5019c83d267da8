package io.flinfer.runtime.forward;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Which attention units a batch gets: decodes behind a common prefix share tiles when the prefix is
 * most of their contexts, long extends get extend tiles, the rest attend token by token, and every
 * query is in exactly one unit.
 */
class AttentionPlanTest {
  private static final int MAX = 256;
  private static final int KV_HEADS = 4;
  private static final int GROUP = 2;

  /**
   * A decode of request {@code r} at {@code position}, its row's first {@code common} slots shared.
   */
  private static void decode(ForwardBatch b, int[] table, int r, int position, int common) {
    for (int j = 0; j <= position; j++) {
      table[r * MAX + j] = j < common ? 1 + j : 1000 * (r + 1) + j;
    }
    b.add(r, position, new int[] {5}, 0, 1, new int[] {table[r * MAX + position]}, 0);
  }

  @Test
  void decodesBehindALongCommonPrefixShareTiles() {
    int[] table = new int[8 * MAX];
    ForwardBatch b = new ForwardBatch();
    for (int r = 0; r < 5; r++) {
      decode(b, table, r, 100 + r, 80);
    }
    // Its own rows from the first slot on: no tile to share.
    decode(b, table, 5, 90, 0);
    // An extend of 12 tokens.
    b.add(6, 0, new int[12], 0, 12, new int[12], 0);
    AttentionPlan plan = new AttentionPlan(KV_HEADS, GROUP, 4, true, true, 2);
    plan.plan(b, table, MAX, true);

    List<String> units = describe(plan);
    // Four decodes fill a tile (4 requests x 2 heads) for each KV head; the fifth alone is too
    // few queries for a tile.
    assertThat(units)
        .filteredOn(u -> u.startsWith("shared"))
        .hasSize(KV_HEADS)
        .allSatisfy(u -> assertThat(u).endsWith("requests 4, shared 80"));
    assertThat(units).filteredOn(u -> u.startsWith("extend")).hasSize(3 * KV_HEADS);
    assertThat(coverage(plan, b)).containsOnly(1);
  }

  @Test
  void aLoneDecodeSplitsItsHeadsOnlyWhenThreadsShareTheWork() {
    int[] table = new int[8 * MAX];
    ForwardBatch b = new ForwardBatch();
    decode(b, table, 0, 50, 0);
    AttentionPlan plan = new AttentionPlan(KV_HEADS, GROUP, 4, true, true, 2);
    plan.plan(b, table, MAX, false);
    assertThat(plan.units).isOne();
    assertThat(plan.kvHeadCount[0]).isEqualTo(KV_HEADS);
    plan.plan(b, table, MAX, true);
    assertThat(plan.units)
        .as("a run of KV heads per unit, four units for two threads")
        .isEqualTo(4);
    assertThat(coverage(plan, b)).containsOnly(1);
  }

  @Test
  void withoutSharedTilesEveryDecodeAttendsAlone() {
    assertThat(fourDecodes(100, 90, false)).allMatch(u -> u.startsWith("token"));
  }

  @Test
  void aCommonPrefixShorterThanHalfTheContextsIsNotWorthATile() {
    assertThat(fourDecodes(200, 60, true)).noneMatch(u -> u.startsWith("shared"));
  }

  /** The units of four decodes at {@code position} whose rows share {@code common} slots. */
  private static List<String> fourDecodes(int position, int common, boolean sharedTiles) {
    int[] table = new int[8 * MAX];
    ForwardBatch b = new ForwardBatch();
    for (int r = 0; r < 4; r++) {
      decode(b, table, r, position, common);
    }
    AttentionPlan plan = new AttentionPlan(KV_HEADS, GROUP, 4, true, sharedTiles, 2);
    plan.plan(b, table, MAX, true);
    assertThat(coverage(plan, b)).containsOnly(1);
    return describe(plan);
  }

  private static List<String> describe(AttentionPlan p) {
    List<String> out = new ArrayList<>();
    for (int u = 0; u < p.units; u++) {
      switch (p.kind[u]) {
        case AttentionPlan.SHARED_TILE ->
            out.add(
                "shared kv "
                    + p.kvHead[u]
                    + " requests "
                    + p.tokens[u]
                    + ", shared "
                    + p.shared[u]);
        case AttentionPlan.EXTEND_TILE -> out.add("extend token " + p.token[u]);
        default -> out.add("token " + p.token[u]);
      }
    }
    return out;
  }

  /** How many units attend each (token, KV head). */
  private static int[] coverage(AttentionPlan p, ForwardBatch b) {
    int[] seen = new int[b.numTokens() * KV_HEADS];
    for (int u = 0; u < p.units; u++) {
      if (p.kind[u] == AttentionPlan.SHARED_TILE) {
        for (int m = 0; m < p.tokens[u]; m++) {
          int t = b.tokenOffset(p.members[p.token[u] + m]);
          seen[t * KV_HEADS + p.kvHead[u]]++;
        }
      } else {
        for (int t = p.token[u]; t < p.token[u] + p.tokens[u]; t++) {
          for (int h = p.kvHead[u]; h < p.kvHead[u] + p.kvHeadCount[u]; h++) {
            seen[t * KV_HEADS + h]++;
          }
        }
      }
    }
    return seen;
  }
}
