package io.flinfer.memcache;

import static io.flinfer.memcache.SimpleTokenToKvPoolAllocator.GROUP;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;
import org.junit.jupiter.api.Test;

/**
 * Where the page-size-1 allocator puts tokens (each request's side by side, new runs in whole
 * groups), and that under any workload it hands out each slot once and counts what is free.
 */
class SimpleTokenToKvPoolAllocatorTest {

  @Test
  void requestsDecodingSideBySideEachGrowTheirOwnRun() {
    SimpleTokenToKvPoolAllocator a = new SimpleTokenToKvPoolAllocator(256);
    int[] prompts =
        a.allocExtend(new int[] {0, 0, 0}, new int[] {5, 3, 20}, new int[] {-1, -1, -1});
    List<List<Integer>> runs = new ArrayList<>();
    int k = 0;
    for (int len : new int[] {5, 3, 20}) {
      List<Integer> run = new ArrayList<>();
      for (int i = 0; i < len; i++) {
        run.add(prompts[k++]);
      }
      runs.add(run);
      // Each starts a group of its own.
      assertThat(run.get(0) % GROUP).isZero();
    }
    for (int step = 0; step < 30; step++) {
      int[] lens = new int[3];
      int[] last = new int[3];
      for (int r = 0; r < 3; r++) {
        lens[r] = runs.get(r).size() + 1;
        last[r] = runs.get(r).get(runs.get(r).size() - 1);
      }
      int[] next = a.allocDecode(lens, last);
      for (int r = 0; r < 3; r++) {
        runs.get(r).add(next[r]);
      }
    }
    for (List<Integer> run : runs) {
      int breaks = 0;
      for (int i = 1; i < run.size(); i++) {
        if (run.get(i) != run.get(i - 1) + 1) {
          breaks++;
          assertThat(run.get(i) % GROUP).as("a new run starts a group").isZero();
        }
      }
      // A run only breaks where the next group was taken by another request.
      assertThat(breaks).isLessThanOrEqualTo(run.size() / GROUP);
    }
  }

  @Test
  void withoutAWholeFreeGroupARunStartsAtAFreeSlot() {
    SimpleTokenToKvPoolAllocator a = new SimpleTokenToKvPoolAllocator(2 * GROUP - 1);
    int[] all = a.alloc(2 * GROUP - 1);
    assertThat(a.freeGroups()).isZero();
    a.free(new int[] {all[3], all[20]});
    assertThat(a.freeGroups()).isZero();
    int[] one = a.alloc(1);
    assertThat(one[0]).isIn(all[3], all[20]);
    assertThat(a.availableSize()).isEqualTo(1);
  }

  /**
   * In a full pool that evicts only what a step lacks, runs that cannot continue share the few free
   * stretches: each starts halfway into the longest one, so several runs split a stretch and each
   * keeps room to grow, rather than taking its slots in turn.
   */
  @Test
  void runsStartedInAFullPoolSplitTheLongestFreeStretch() {
    SimpleTokenToKvPoolAllocator a = new SimpleTokenToKvPoolAllocator(4 * GROUP);
    int[] all = a.alloc(4 * GROUP);
    // Free an unaligned stretch of 24 slots (no whole group) and a short one elsewhere.
    int[] stretch = new int[24];
    for (int i = 0; i < 24; i++) {
      stretch[i] = 20 + i;
    }
    a.free(stretch);
    a.free(new int[] {60, 61});
    assertThat(a.freeGroups()).isZero();
    int[] starts = a.allocDecode(new int[] {5, 5, 5}, new int[] {1, 2, 3});
    // 24 free from 20, after a slot no run grows from: the first takes the stretch's start. The
    // second halves what is left after it (21..43), the third the longest part left (21..31).
    assertThat(starts).containsExactly(20, 32, 26);
    // Each can now grow a few slots before meeting the next.
    int[] next = a.allocDecode(new int[] {6, 6, 6}, starts);
    assertThat(next).containsExactly(21, 33, 27);
  }

  /** Random extends, decodes and frees against a model of which slots are held. */
  @Property(tries = 60)
  void everySlotIsHandedOutOnceAndTheFreeCountsAreExact(
      @ForAll @IntRange(min = 1, max = 300) int size, @ForAll @LongRange(min = 1) long seed) {
    Random rnd = new Random(seed);
    SimpleTokenToKvPoolAllocator a = new SimpleTokenToKvPoolAllocator(size);
    List<List<Integer>> requests = new ArrayList<>();
    Set<Integer> held = new HashSet<>();
    for (int op = 0; op < 400; op++) {
      int kind = rnd.nextInt(4);
      if (kind == 0 || requests.isEmpty()) {
        int n = 1 + rnd.nextInt(3);
        int[] prefix = new int[n];
        int[] seq = new int[n];
        int[] last = new int[n];
        for (int i = 0; i < n; i++) {
          seq[i] = 1 + rnd.nextInt(40);
          last[i] = -1;
        }
        int[] got = a.allocExtend(prefix, seq, last);
        int need = java.util.Arrays.stream(seq).sum();
        if (got == null) {
          assertThat(need).isGreaterThan(size - held.size());
        } else {
          int k = 0;
          for (int i = 0; i < n; i++) {
            List<Integer> r = new ArrayList<>();
            for (int t = 0; t < seq[i]; t++) {
              r.add(got[k++]);
            }
            take(held, r);
            requests.add(r);
          }
        }
      } else if (kind == 1) {
        int[] lens = new int[requests.size()];
        int[] last = new int[requests.size()];
        for (int i = 0; i < lens.length; i++) {
          List<Integer> r = requests.get(i);
          lens[i] = r.size() + 1;
          last[i] = r.get(r.size() - 1);
        }
        int[] got = a.allocDecode(lens, last);
        if (got == null) {
          assertThat(lens.length).isGreaterThan(size - held.size());
        } else {
          for (int i = 0; i < got.length; i++) {
            take(held, List.of(got[i]));
            requests.get(i).add(got[i]);
          }
        }
      } else {
        boolean grouped = kind == 3;
        if (grouped) {
          a.freeGroupBegin();
        }
        int n = 1 + rnd.nextInt(Math.min(3, requests.size()));
        for (int i = 0; i < n && !requests.isEmpty(); i++) {
          List<Integer> r = requests.remove(rnd.nextInt(requests.size()));
          a.free(r.stream().mapToInt(Integer::intValue).toArray());
          held.removeAll(r);
        }
        if (grouped) {
          a.freeGroupEnd();
        }
      }
      assertThat(a.availableSize()).isEqualTo(size - held.size());
      for (int s : held) {
        assertThat(a.isFree(s)).isFalse();
      }
      assertThat(a.freeGroups()).isEqualTo(wholeFreeGroups(a, size));
    }
  }

  private static void take(Set<Integer> held, List<Integer> slots) {
    for (int s : slots) {
      assertThat(s).isBetween(1, Integer.MAX_VALUE);
      assertThat(held.add(s)).as("slot %d handed out twice", s).isTrue();
    }
  }

  private static int wholeFreeGroups(SimpleTokenToKvPoolAllocator a, int size) {
    int n = 0;
    for (int g = 0; (g + 1) * GROUP - 1 <= size; g++) {
      boolean whole = true;
      for (int s = g * GROUP; s < (g + 1) * GROUP; s++) {
        whole &= a.isFree(s);
      }
      n += whole ? 1 : 0;
    }
    return n;
  }
}
