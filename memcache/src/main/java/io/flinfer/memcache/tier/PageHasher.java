package io.flinfer.memcache.tier;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * Names storage pages (SGLang's {@code get_hash_str} chain): page i's name is a SHA-256 over the
 * previous page's name and page i's tokens, starting from a hash of the salt (what makes KV
 * comparable: model, KV format, page size) and the namespace. A name thus stands for the whole
 * prefix up to the end of its page, and identical prefixes share pages only inside one namespace.
 */
public final class PageHasher {
  private final byte[] salt;
  private final int pageTokens;

  public PageHasher(String salt, int pageTokens) {
    if (pageTokens <= 0) {
      throw new IllegalArgumentException("page tokens must be positive: " + pageTokens);
    }
    this.salt = salt.getBytes(StandardCharsets.UTF_8);
    this.pageTokens = pageTokens;
  }

  public int pageTokens() {
    return pageTokens;
  }

  /** The names of the first {@code pages} pages of {@code tokens} in {@code namespace}. */
  public String[] names(String namespace, int[] tokens, int pages) {
    String[] names = new String[pages];
    chain(namespace, tokens, pages, names);
    return names;
  }

  /**
   * The names of the tail pages after the first {@code pages} whole pages of {@code tokens}: entry
   * {@code n - 1} names the {@code n} tokens that follow them, for n up to {@code maxTail} (less
   * than a page). A tail is the end of a prefix that stops inside a page; its name is marked apart
   * from a whole page's, so the two never collide.
   */
  public String[] tails(String namespace, int[] tokens, int pages, int maxTail) {
    if (maxTail >= pageTokens || (long) pages * pageTokens + maxTail > tokens.length) {
      throw new IllegalArgumentException(
          "a tail of " + maxTail + " after " + pages + " pages of " + pageTokens);
    }
    byte[] prev = chain(namespace, tokens, pages, null);
    MessageDigest sha = sha256();
    String[] names = new String[maxTail];
    for (int n = 1; n <= maxTail; n++) {
      sha.update(prev);
      sha.update((byte) 'T');
      sha.update(bytes(tokens, pages * pageTokens, n));
      names[n - 1] = HexFormat.of().formatHex(sha.digest(), 0, 20);
    }
    return names;
  }

  /** Hashes the chain through {@code pages} pages, naming them into {@code names} if given. */
  private byte[] chain(String namespace, int[] tokens, int pages, String[] names) {
    if ((long) pages * pageTokens > tokens.length) {
      throw new IllegalArgumentException(
          pages + " pages of " + pageTokens + " tokens from " + tokens.length + " tokens");
    }
    MessageDigest sha = sha256();
    sha.update(salt);
    sha.update((byte) 0);
    sha.update(namespace.getBytes(StandardCharsets.UTF_8));
    byte[] prev = sha.digest();
    for (int p = 0; p < pages; p++) {
      sha.update(prev);
      sha.update(bytes(tokens, p * pageTokens, pageTokens));
      prev = sha.digest();
      if (names != null) {
        names[p] = HexFormat.of().formatHex(prev, 0, 20);
      }
    }
    return prev;
  }

  /** {@code tokens[from..from + n)} as little-endian bytes. */
  private static byte[] bytes(int[] tokens, int from, int n) {
    byte[] b = new byte[n * 4];
    for (int i = 0; i < n; i++) {
      int t = tokens[from + i];
      b[4 * i] = (byte) t;
      b[4 * i + 1] = (byte) (t >>> 8);
      b[4 * i + 2] = (byte) (t >>> 16);
      b[4 * i + 3] = (byte) (t >>> 24);
    }
    return b;
  }

  private static MessageDigest sha256() {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JVM has SHA-256", e);
    }
  }
}
