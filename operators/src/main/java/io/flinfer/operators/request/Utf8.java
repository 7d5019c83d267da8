package io.flinfer.operators.request;

/** UTF-8 sizes of strings, counted without encoding them. */
public final class Utf8 {
  private Utf8() {}

  /** The UTF-8 length of {@code s} (a lone surrogate counts as the 3 bytes of U+FFFD's). */
  public static long length(CharSequence s) {
    long n = 0;
    int len = s.length();
    for (int i = 0; i < len; i++) {
      char c = s.charAt(i);
      if (c < 0x80) {
        n++;
      } else if (c < 0x800) {
        n += 2;
      } else if (Character.isHighSurrogate(c)
          && i + 1 < len
          && Character.isLowSurrogate(s.charAt(i + 1))) {
        n += 4;
        i++;
      } else {
        n += 3;
      }
    }
    return n;
  }

  /**
   * {@code s} cut to at most {@code maxBytes} UTF-8 bytes on a character boundary, with "…" (within
   * the limit) when cut. Null stays null.
   */
  public static String truncate(String s, int maxBytes) {
    if (s == null || length(s) <= maxBytes) {
      return s;
    }
    int budget = Math.max(0, maxBytes - 3);
    StringBuilder out = new StringBuilder();
    long used = 0;
    for (int i = 0; i < s.length(); ) {
      int cp = s.codePointAt(i);
      int bytes = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
      if (used + bytes > budget) {
        break;
      }
      out.appendCodePoint(cp);
      used += bytes;
      i += Character.charCount(cp);
    }
    return out.append('…').toString();
  }
}
