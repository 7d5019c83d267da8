package io.flinfer.memcache.tier;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FileKvStorageTest {
  private static final int PAGE = 4;
  private static final int SLOT = 16;

  @TempDir Path dir;

  private static byte[] kv(long seed) {
    byte[] b = new byte[PAGE * SLOT];
    new Random(seed).nextBytes(b);
    return b;
  }

  private Path fileOf(String name) throws IOException {
    try (Stream<Path> s = Files.walk(dir)) {
      return s.filter(p -> p.getFileName().toString().equals(name + ".kv")).findFirst().get();
    }
  }

  @Test
  void aStoredPageReadsBackAfterARestart() {
    int[] tokens = {1, 2, 3, 4, 5, 6, 7, 8};
    String[] names = new PageHasher("m", PAGE).names("", tokens, 2);
    try (FileKvStorage s = new FileKvStorage(dir, 1 << 20, PAGE, SLOT)) {
      s.put(names[0], tokens, 0, kv(1));
      s.put(names[1], tokens, 4, kv(2));
      s.flush();
      assertThat(s.get(names[1], tokens, 4)).isEqualTo(kv(2));
    }
    try (FileKvStorage s = new FileKvStorage(dir, 1 << 20, PAGE, SLOT)) {
      assertThat(s.pages()).isEqualTo(2);
      assertThat(s.get(names[0], tokens, 0)).isEqualTo(kv(1));
      assertThat(s.get(names[1], tokens, 4)).isEqualTo(kv(2));
    }
  }

  @Test
  void aDamagedOrTruncatedFileIsAMissAndIsDeleted() throws IOException {
    int[] tokens = {1, 2, 3, 4, 5, 6, 7, 8};
    String[] names = new PageHasher("m", PAGE).names("", tokens, 2);
    try (FileKvStorage s = new FileKvStorage(dir, 1 << 20, PAGE, SLOT)) {
      s.put(names[0], tokens, 0, kv(1));
      s.put(names[1], tokens, 4, kv(2));
      s.flush();
      Path flipped = fileOf(names[0]);
      byte[] b = Files.readAllBytes(flipped);
      b[40] ^= 1; // one bit of the KV
      Files.write(flipped, b);
      Path cut = fileOf(names[1]);
      byte[] c = Files.readAllBytes(cut);
      Files.write(cut, Arrays.copyOf(c, c.length - 3));

      assertThat(s.get(names[0], tokens, 0)).isNull();
      assertThat(s.get(names[1], tokens, 4)).isNull();
      assertThat(s.counters().corruptPages()).isEqualTo(2);
      assertThat(s.contains(names[0])).isFalse();
      assertThat(Files.exists(flipped)).isFalse();
    }
  }

  @Test
  void aPageHoldingOtherTokensIsAMiss() {
    int[] tokens = {1, 2, 3, 4};
    String name = new PageHasher("m", PAGE).names("", tokens, 1)[0];
    try (FileKvStorage s = new FileKvStorage(dir, 1 << 20, PAGE, SLOT)) {
      s.put(name, tokens, 0, kv(1));
      s.flush();
      assertThat(s.get(name, new int[] {1, 2, 3, 9}, 0)).isNull();
    }
  }

  @Test
  void theSizeLimitDropsTheLeastRecentlyUsedPages() {
    int[] tokens = new int[PAGE * 6];
    Arrays.setAll(tokens, i -> i);
    String[] names = new PageHasher("m", PAGE).names("", tokens, 6);
    try (FileKvStorage s = new FileKvStorage(dir, 1 << 20, PAGE, SLOT)) {
      long limit = 3L * s.pageFileBytes();
      s.close();
      try (FileKvStorage t = new FileKvStorage(dir, limit, PAGE, SLOT)) {
        for (int p = 0; p < 3; p++) {
          t.put(names[p], tokens, p * PAGE, kv(p));
        }
        t.flush();
        assertThat(t.get(names[0], tokens, 0)).isNotNull(); // page 0 is now the most recent
        t.put(names[3], tokens, 3 * PAGE, kv(3));
        t.flush();
        assertThat(t.pages()).isEqualTo(3);
        assertThat(t.contains(names[1])).isFalse();
        assertThat(t.contains(names[0])).isTrue();
        assertThat(t.contains(names[3])).isTrue();
      }
    }
  }

  /**
   * Two stores on one directory (two subtasks on one machine): each finds the pages the other
   * wrote, writes none twice, and the directory as a whole stays within the limit (plus the eighth
   * of it written between listings), the least recently used pages going first, whoever wrote them.
   */
  @Test
  void storesSharingADirectorySeeEachOthersPagesAndShareOneLimit() throws IOException {
    int pages = 40;
    int[] tokens = new int[PAGE * pages];
    Arrays.setAll(tokens, i -> i);
    String[] names = new PageHasher("m", PAGE).names("", tokens, pages);
    long limit;
    try (FileKvStorage probe = new FileKvStorage(dir, 1 << 20, PAGE, SLOT)) {
      limit = 16L * probe.pageFileBytes();
    }
    try (FileKvStorage a = new FileKvStorage(dir, limit, PAGE, SLOT);
        FileKvStorage b = new FileKvStorage(dir, limit, PAGE, SLOT)) {
      a.put(names[0], tokens, 0, kv(0));
      a.flush();
      assertThat(b.contains(names[0])).isTrue();
      assertThat(b.get(names[0], tokens, 0)).isEqualTo(kv(0));
      for (int p = 1; p < pages; p++) {
        FileKvStorage writer = p % 2 == 0 ? a : b;
        if (!writer.contains(names[p])) {
          writer.put(names[p], tokens, p * PAGE, kv(p));
        }
        writer.flush();
        assertThat(directoryBytes())
            .as("after page %d", p)
            .isLessThanOrEqualTo(limit + 2 * (limit / 8 + a.pageFileBytes()));
      }
      // The newest pages are there, from either store; the oldest were trimmed by whichever listed.
      for (int p = pages - 4; p < pages; p++) {
        assertThat(a.get(names[p], tokens, p * PAGE)).as("page %d", p).isEqualTo(kv(p));
        assertThat(b.get(names[p], tokens, p * PAGE)).as("page %d", p).isEqualTo(kv(p));
      }
      assertThat(a.get(names[1], tokens, PAGE)).isNull();
      assertThat(b.get(names[1], tokens, PAGE)).isNull();
      assertThat(a.counters().corruptPages() + b.counters().corruptPages()).isZero();
    }
  }

  private long directoryBytes() throws IOException {
    try (Stream<Path> s = Files.walk(dir)) {
      return s.filter(p -> p.toString().endsWith(".kv")).mapToLong(p -> p.toFile().length()).sum();
    }
  }

  /**
   * A prefix that ends inside a page keeps its tail as a shorter page: it reads back after a
   * restart, only for its own length and tokens, and its name is no whole page's.
   */
  @Test
  void aTailPageReadsBackForItsOwnLengthOnly() {
    int[] tokens = {1, 2, 3, 4, 5, 6, 7, 8};
    PageHasher h = new PageHasher("m", PAGE);
    PageHasher.Chain chain = h.chain("", tokens, 1);
    String[] tails = {chain.tail(1, 1), chain.tail(1, 2), chain.tail(1, 3)};
    byte[] three = Arrays.copyOf(kv(3), 3 * SLOT);
    try (FileKvStorage s = new FileKvStorage(dir, 1 << 20, PAGE, SLOT)) {
      s.put(tails[2], tokens, 4, 3, three);
      s.flush();
      assertThat(s.get(tails[2], tokens, 4, 3)).isEqualTo(three);
    }
    try (FileKvStorage s = new FileKvStorage(dir, 1 << 20, PAGE, SLOT)) {
      assertThat(s.pages()).isEqualTo(1);
      assertThat(s.contains(tails[1])).isFalse();
      int[] other = {1, 2, 3, 4, 5, 6, 9, 8};
      assertThat(s.get(tails[2], other, 4, 3)).as("other tokens").isNull();
      assertThat(s.pages()).as("a mismatch drops the page").isZero();
    }
    assertThat(tails[2]).isNotEqualTo(h.names("", new int[] {1, 2, 3, 4, 5, 6, 7, 0}, 2)[1]);
    // The same tail whatever the chain was computed through.
    assertThat(h.chain("", tokens, 2).tail(1, 2)).isEqualTo(tails[1]);
    assertThat(chain.name(0)).isEqualTo(h.names("", tokens, 1)[0]);
  }

  @Test
  void namesDifferByNamespaceAndSaltAndChainThePrefix() {
    int[] a = {1, 2, 3, 4, 5, 6, 7, 8};
    int[] b = {9, 2, 3, 4, 5, 6, 7, 8};
    PageHasher h = new PageHasher("m", PAGE);
    assertThat(h.names("x", a, 2)[1]).isNotEqualTo(h.names("y", a, 2)[1]);
    assertThat(h.names("x", a, 2)[1]).isNotEqualTo(new PageHasher("n", PAGE).names("x", a, 2)[1]);
    // Same second page, other first page: another name.
    assertThat(h.names("x", a, 2)[1]).isNotEqualTo(h.names("x", b, 2)[1]);
    assertThat(h.names("x", a, 2)[0]).isEqualTo(h.names("x", a, 1)[0]);
  }
}
