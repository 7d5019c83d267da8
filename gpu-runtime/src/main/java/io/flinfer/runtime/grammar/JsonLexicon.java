package io.flinfer.runtime.grammar;

/**
 * JSON's lexical rules inside strings and numbers (RFC 8259), as functions from a small state word
 * and a byte to the next state word, shared by the grammars ({@link JsonPrefix}, {@link
 * SchemaPrefix}). Strings hold valid UTF-8 only (no overlong forms, no surrogates, nothing above
 * U+10FFFF) and no raw control characters; numbers have no leading zeros.
 */
final class JsonLexicon {
  /** The byte cannot come here. */
  static final int REJECT = -1;

  /** A string's closing quote; or, for a number, the byte after its end (not part of it). */
  static final int END = -2;

  /** Inside a string, at a character: the state in which a string starts. */
  static final int CHARS = 0;

  private static final int ESCAPE = 1;
  // 2..5: after "\\u", with 1..4 hex digits still due. UTF-8 continuation bytes due:
  // UTF8 + due | lowest allowed next byte << 8 | highest << 16.
  private static final int UTF8 = 8;

  // Number states; a number starts with numberStart.
  private static final int MINUS = 1;
  private static final int ZERO = 2;
  private static final int DIGITS = 3;
  private static final int POINT = 4;
  private static final int FRACTION = 5;
  private static final int EXPONENT = 6;
  private static final int EXPONENT_SIGN = 7;
  private static final int EXPONENT_DIGITS = 8;

  private JsonLexicon() {}

  /** Whether {@code b} is JSON whitespace. */
  static boolean isSpace(int b) {
    return b == ' ' || b == '\n' || b == '\r' || b == '\t';
  }

  /** The string state after byte {@code b} in state {@code s}. */
  static int string(int s, int b) {
    if (s == CHARS) {
      if (b == '"') {
        return END;
      }
      if (b == '\\') {
        return ESCAPE;
      }
      if (b < 0x20) {
        return REJECT;
      }
      if (b < 0x80) {
        return CHARS;
      }
      // A character's first byte, and the range its second byte must be in.
      if (b >= 0xc2 && b <= 0xdf) {
        return utf8(1, 0x80, 0xbf);
      }
      if (b >= 0xe0 && b <= 0xef) {
        return utf8(2, b == 0xe0 ? 0xa0 : 0x80, b == 0xed ? 0x9f : 0xbf);
      }
      if (b >= 0xf0 && b <= 0xf4) {
        return utf8(3, b == 0xf0 ? 0x90 : 0x80, b == 0xf4 ? 0x8f : 0xbf);
      }
      return REJECT;
    }
    if (s == ESCAPE) {
      switch (b) {
        case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
          return CHARS;
        case 'u':
          return 1 + 4;
        default:
          return REJECT;
      }
    }
    if (s < UTF8) {
      boolean hex = b >= '0' && b <= '9' || b >= 'a' && b <= 'f' || b >= 'A' && b <= 'F';
      return !hex ? REJECT : s == 2 ? CHARS : s - 1;
    }
    if (b < (s >>> 8 & 0xff) || b > (s >>> 16 & 0xff)) {
      return REJECT;
    }
    int due = (s & 0xff) - UTF8 - 1;
    return due == 0 ? CHARS : utf8(due, 0x80, 0xbf);
  }

  /**
   * The state of free text (no quotes or escapes: every character stands for itself) after byte
   * {@code b} in state {@code s}: {@link #CHARS} at a character's end, or inside a multi-byte one.
   * Valid UTF-8 only, as in strings; control characters too.
   */
  static int text(int s, int b) {
    return s == CHARS && b < 0x80 ? CHARS : string(s, b);
  }

  /**
   * The character being read, after byte {@code b} in string state {@code s}, from {@code partial}
   * (what the bytes before gave): its code point once the state returns to {@link #CHARS} (an
   * escape's character; a {@code \\u} escape's UTF-16 code unit), and a part of it until then.
   */
  static int character(int s, int b, int partial) {
    if (s == CHARS) {
      return b < 0x80 ? b : b < 0xe0 ? b & 0x1f : b < 0xf0 ? b & 0x0f : b & 0x07;
    }
    if (s == ESCAPE) {
      return switch (b) {
        case 'b' -> '\b';
        case 'f' -> '\f';
        case 'n' -> '\n';
        case 'r' -> '\r';
        case 't' -> '\t';
        case 'u' -> 0;
        default -> b; // " \\ /
      };
    }
    if (s < UTF8) {
      return partial << 4 | Character.digit(b, 16);
    }
    return partial << 6 | (b & 0x3f);
  }

  /**
   * In string state {@code s} inside a character ({@code partial} so far): the code points (a
   * {@code \\u} escape's code units) it can still become, as {@code lowest << 32 | highest}; -1
   * right after a backslash, where any character can come (as a {@code \\u} escape).
   */
  static long completions(int s, int partial) {
    if (s == ESCAPE) {
      return -1;
    }
    long lowest;
    long highest;
    if (s < UTF8) {
      int due = s - 1; // hex digits
      lowest = (long) partial << 4 * due;
      highest = lowest | (1L << 4 * due) - 1;
    } else {
      int due = (s & 0xff) - UTF8; // continuation bytes, the next one within [low, high]
      int rest = 6 * (due - 1);
      lowest = (long) (partial << 6 | (s >>> 8 & 0x3f)) << rest;
      highest = (long) (partial << 6 | (s >>> 16 & 0x3f)) << rest | (1L << rest) - 1;
    }
    return lowest << 32 | highest;
  }

  private static int utf8(int due, int low, int high) {
    return UTF8 + due | low << 8 | high << 16;
  }

  /** The number state after its first byte {@code b}, or {@link #REJECT}. */
  static int numberStart(int b) {
    if (b == '-') {
      return MINUS;
    }
    return b == '0' ? ZERO : b >= '1' && b <= '9' ? DIGITS : REJECT;
  }

  /**
   * The number state after byte {@code b} in state {@code s}; {@link #END} where the number may end
   * and {@code b} is not part of it. Without {@code real}, an integer: no fraction, no exponent.
   */
  static int number(int s, int b, boolean real) {
    boolean digit = b >= '0' && b <= '9';
    switch (s) {
      case MINUS:
        return !digit ? REJECT : b == '0' ? ZERO : DIGITS;
      case ZERO:
        return real ? fractionOrExponent(b) : END;
      case DIGITS:
        return digit ? DIGITS : real ? fractionOrExponent(b) : END;
      case POINT:
        return digit ? FRACTION : REJECT;
      case FRACTION:
        return digit ? FRACTION : b == 'e' || b == 'E' ? EXPONENT : END;
      case EXPONENT:
        return b == '+' || b == '-' ? EXPONENT_SIGN : digit ? EXPONENT_DIGITS : REJECT;
      case EXPONENT_SIGN:
        return digit ? EXPONENT_DIGITS : REJECT;
      default: // EXPONENT_DIGITS
        return digit ? EXPONENT_DIGITS : END;
    }
  }

  /** Whether number state {@code s} is after the point (before any exponent). */
  static boolean inFraction(int s) {
    return s == POINT || s == FRACTION;
  }

  private static int fractionOrExponent(int b) {
    return b == '.' ? POINT : b == 'e' || b == 'E' ? EXPONENT : END;
  }
}
