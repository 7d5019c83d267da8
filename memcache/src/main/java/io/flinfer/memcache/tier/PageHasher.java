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
    Chain c = chain(namespace, tokens, pages);
    String[] names = new String[pages];
    for (int p = 0; p < pages; p++) {
      names[p] = c.name(p);
    }
    return names;
  }

  /**
   * The hash chain through the first {@code pages} pages of {@code tokens} in {@code namespace}.
   */
  public Chain chain(String namespace, int[] tokens, int pages) {
    if ((long) pages * pageTokens > tokens.length) {
      throw new IllegalArgumentException(
          pages + " pages of " + pageTokens + " tokens from " + tokens.length + " tokens");
    }
    MessageDigest sha = sha256();
    sha.update(salt);
    sha.update((byte) 0);
    sha.update(namespace.getBytes(StandardCharsets.UTF_8));
    byte[][] digests = new byte[pages + 1][];
    digests[0] = sha.digest();
    for (int p = 0; p < pages; p++) {
      sha.update(digests[p]);
      sha.update(bytes(tokens, p * pageTokens, pageTokens));
      digests[p + 1] = sha.digest();
    }
    return new Chain(tokens, digests);
  }

  /**
   * One token sequence's chain, hashed once: the names of its pages, and of the tails after them. A
   * tail is the end of a prefix that stops inside a page; its name is marked apart from a whole
   * page's, so the two never collide.
   */
  public final class Chain {
    private final int[] tokens;
    private final byte[][] digests;

    private Chain(int[] tokens, byte[][] digests) {
      this.tokens = tokens;
      this.digests = digests;
    }

    /** Page {@code p}'s name: it stands for every token up to the page's end. */
    public String name(int p) {
      return HexFormat.of().formatHex(digests[p + 1], 0, 20);
    }

    /** The name of the {@code n} tokens (less than a page) that follow the first {@code pages}. */
    public String tail(int pages, int n) {
      if (n <= 0 || n >= pageTokens || (long) pages * pageTokens + n > tokens.length) {
        throw new IllegalArgumentException(
            "a tail of " + n + " after " + pages + " pages of " + pageTokens);
      }
      MessageDigest sha = sha256();
      sha.update(digests[pages]);
      sha.update((byte) 'T');
      sha.update(bytes(tokens, pages * pageTokens, n));
      return HexFormat.of().formatHex(sha.digest(), 0, 20);
    }
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
