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
    if ((long) pages * pageTokens > tokens.length) {
      throw new IllegalArgumentException(
          pages + " pages of " + pageTokens + " tokens from " + tokens.length + " tokens");
    }
    MessageDigest sha = sha256();
    sha.update(salt);
    sha.update((byte) 0);
    sha.update(namespace.getBytes(StandardCharsets.UTF_8));
    byte[] prev = sha.digest();
    byte[] page = new byte[pageTokens * 4];
    String[] names = new String[pages];
    for (int p = 0; p < pages; p++) {
      for (int i = 0; i < pageTokens; i++) {
        int t = tokens[p * pageTokens + i];
        page[4 * i] = (byte) t;
        page[4 * i + 1] = (byte) (t >>> 8);
        page[4 * i + 2] = (byte) (t >>> 16);
        page[4 * i + 3] = (byte) (t >>> 24);
      }
      sha.update(prev);
      sha.update(page);
      prev = sha.digest();
      names[p] = HexFormat.of().formatHex(prev, 0, 20);
    }
    return names;
  }

  private static MessageDigest sha256() {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JVM has SHA-256", e);
    }
  }
}
