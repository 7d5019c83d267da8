package io.flinfer.memcache;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class PagedTokenToKvPoolAllocatorTest {
  @Test
  void extendFillsThePartialPageThenWholePagesThenAPartialOne() {
    PagedTokenToKvPoolAllocator a = new PagedTokenToKvPoolAllocator(64, 4);
    int[] first = a.allocExtend(new int[] {0}, new int[] {6}, new int[] {-1});
    // Two pages: 4 slots of one page and 2 of the next.
    assertThat(first).hasSize(6);
    assertThat(first[0] % 4).isZero();
    assertThat(first[1]).isEqualTo(first[0] + 1);
    assertThat(first[4] % 4).isZero();
    assertThat(a.availableSize()).isEqualTo(64 - 8);

    // Grow 6 -> 15: 2 slots finish the page, one new whole page, 3 slots of another new page.
    int last = first[5];
    int[] more = a.allocExtend(new int[] {6}, new int[] {15}, new int[] {last});
    assertThat(more).hasSize(9);
    assertThat(more[0]).isEqualTo(last + 1);
    assertThat(more[1]).isEqualTo(last + 2);
    assertThat(more[2] % 4).isZero();
    assertThat(more).containsSequence(more[2], more[2] + 1, more[2] + 2, more[2] + 3);
    assertThat(more[6] % 4).isZero();
    assertThat(more[8]).isEqualTo(more[6] + 2);
    assertThat(a.availableSize()).isEqualTo(64 - 16);
    assertThat(a.slotsNeededForExtend(6, 15)).isEqualTo(8);
  }

  @Test
  void decodeTakesANewPageOnlyOnAPageBoundary() {
    PagedTokenToKvPoolAllocator a = new PagedTokenToKvPoolAllocator(32, 4);
    int[] s = a.allocExtend(new int[] {0, 0}, new int[] {4, 3}, new int[] {-1, -1});
    int avail = a.availableSize();
    // Request 0 has 4 tokens: its 5th starts a page. Request 1 has 3: its 4th fills its page.
    int[] d = a.allocDecode(new int[] {5, 4}, new int[] {s[3], s[6]});
    assertThat(d[0] % 4).isZero();
    assertThat(d[1]).isEqualTo(s[6] + 1);
    assertThat(a.availableSize()).isEqualTo(avail - 4);
  }

  @Test
  void freeingAnySlotOfAPageFreesThePageOnce() {
    PagedTokenToKvPoolAllocator a = new PagedTokenToKvPoolAllocator(16, 4);
    int[] s = a.alloc(8);
    a.free(new int[] {s[1], s[2]});
    assertThat(a.availableSize()).isEqualTo(12);
    assertThatThrownBy(() -> a.free(new int[] {s[0]})).hasMessageContaining("freed twice");
    assertThatThrownBy(() -> a.free(new int[] {2})).hasMessageContaining("not a KV slot");
    assertThatThrownBy(() -> a.alloc(3)).hasMessageContaining("whole pages");
    assertThat(a.alloc(16)).isNull();
    a.clear();
    assertThat(a.alloc(16)).hasSize(16).doesNotContain(0, 1, 2, 3);
  }

  @Test
  void allocationFailsWithoutTakingAnything() {
    PagedTokenToKvPoolAllocator a = new PagedTokenToKvPoolAllocator(8, 4);
    assertThat(a.allocExtend(new int[] {0, 0}, new int[] {5, 1}, new int[] {-1, -1})).isNull();
    assertThat(a.availableSize()).isEqualTo(8);
  }
}
