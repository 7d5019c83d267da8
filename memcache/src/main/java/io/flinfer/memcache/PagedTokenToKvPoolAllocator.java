package io.flinfer.memcache;

import java.util.Arrays;

/**
 * The paged allocator: KV slots are handed out in pages of {@code pageSize} consecutive slots, and
 * a request's tokens fill its pages in order, so page {@code p} holds slots {@code p * pageSize
 * ..}. Owns the free list of pages; page 0 is the padding page.
 *
 * <p>{@link #allocExtend} first fills the free tail of each request's last partial page, then takes
 * whole new pages; {@link #allocDecode} takes a new page only when a request crosses a page
 * boundary. Freeing any slot of a page frees the page.
 */
public final class PagedTokenToKvPoolAllocator extends GroupedFreeAllocator {
  private final int pageSize;
  private final int numPages;
  private final int[] freePages;
  private int freeCount;
  private final boolean[] pageFree;

  /** A pool of {@code size} usable slots (rounded down to whole pages). */
  public PagedTokenToKvPoolAllocator(int size, int pageSize) {
    if (pageSize < 1 || size < pageSize) {
      throw new IllegalArgumentException(
          "need at least one page: size " + size + ", page size " + pageSize);
    }
    this.pageSize = pageSize;
    this.numPages = size / pageSize;
    this.freePages = new int[numPages];
    this.pageFree = new boolean[numPages + 1];
    clear();
  }

  @Override
  public int pageSize() {
    return pageSize;
  }

  @Override
  public int size() {
    return numPages * pageSize;
  }

  @Override
  public int availableSize() {
    return freeCount * pageSize;
  }

  /** Whole pages: {@code n} must be a multiple of the page size. */
  @Override
  public int[] alloc(int n) {
    if (n % pageSize != 0) {
      throw new IllegalArgumentException(
          "paged alloc needs whole pages: " + n + " is not a multiple of " + pageSize);
    }
    int pages = n / pageSize;
    if (pages > freeCount) {
      return null;
    }
    int[] out = new int[n];
    for (int p = 0; p < pages; p++) {
      int page = takePage();
      for (int j = 0; j < pageSize; j++) {
        out[p * pageSize + j] = page * pageSize + j;
      }
    }
    return out;
  }

  @Override
  public int slotsNeededForExtend(int prefixLen, int seqLen) {
    return (ceilPages(seqLen) - ceilPages(prefixLen)) * pageSize;
  }

  @Override
  public int[] allocExtend(int[] prefixLens, int[] seqLens, int[] lastLocs) {
    int total = 0;
    int newPages = 0;
    for (int i = 0; i < prefixLens.length; i++) {
      total += seqLens[i] - prefixLens[i];
      newPages += ceilPages(seqLens[i]) - ceilPages(prefixLens[i]);
    }
    if (newPages > freeCount) {
      return null;
    }
    int[] out = new int[total];
    int o = 0;
    for (int i = 0; i < prefixLens.length; i++) {
      int pos = prefixLens[i];
      int loc = pos % pageSize != 0 ? lastLocs[i] + 1 : -1;
      for (; pos < seqLens[i]; pos++) {
        if (pos % pageSize == 0) {
          loc = takePage() * pageSize;
        }
        out[o++] = loc++;
      }
    }
    return out;
  }

  @Override
  public int[] allocDecode(int[] seqLens, int[] lastLocs) {
    int newPages = 0;
    for (int len : seqLens) {
      if ((len - 1) % pageSize == 0) {
        newPages++;
      }
    }
    if (newPages > freeCount) {
      return null;
    }
    int[] out = new int[seqLens.length];
    for (int i = 0; i < seqLens.length; i++) {
      out[i] = (seqLens[i] - 1) % pageSize == 0 ? takePage() * pageSize : lastLocs[i] + 1;
    }
    return out;
  }

  @Override
  protected void release(int[] slots, int from, int len) {
    if (len == 0) {
      return;
    }
    int lastPage = -1;
    for (int i = from; i < from + len; i++) {
      int slot = slots[i];
      int page = slot / pageSize;
      if (slot < pageSize || page > numPages) {
        throw new IllegalArgumentException("not a KV slot of this pool: " + slot);
      }
      if (page == lastPage) {
        continue; // a page's slots usually come together
      }
      if (!pageFree[page]) {
        pageFree[page] = true;
        freePages[freeCount++] = page;
      } else if (!containsPage(slots, from, i, page)) {
        throw new IllegalStateException(
            "KV page freed twice: page " + page + " (slot " + slot + ")");
      }
      lastPage = page;
    }
  }

  /** Whether an earlier slot of this same free call was on {@code page}. */
  private boolean containsPage(int[] slots, int from, int to, int page) {
    for (int i = from; i < to; i++) {
      if (slots[i] / pageSize == page) {
        return true;
      }
    }
    return false;
  }

  @Override
  public boolean isFree(int slot) {
    int page = slot / pageSize;
    return page > 0 && page <= numPages && pageFree[page];
  }

  @Override
  public void clear() {
    for (int i = 0; i < numPages; i++) {
      freePages[i] = numPages - i;
    }
    freeCount = numPages;
    Arrays.fill(pageFree, true);
    pageFree[0] = false;
    endGroupWithoutRelease();
  }

  private int takePage() {
    int page = freePages[--freeCount];
    pageFree[page] = false;
    return page;
  }

  private int ceilPages(int tokens) {
    return (tokens + pageSize - 1) / pageSize;
  }
}
