package io.flinfer.runtime.grammar;

/**
 * Reads UTF-8 bytes one at a time and says whether they are still the start of one JSON object (RFC
 * 8259): a pushdown automaton whose whole state is a few fields, so it is copied without
 * allocating. The object may be preceded by whitespace and is followed by nothing. Strings must be
 * valid UTF-8 (no overlong forms, no surrogates, nothing above U+10FFFF) without raw control
 * characters; numbers have no leading zeros.
 *
 * <p>Limits keep a sampled object finite where JSON itself has none: nesting at most {@link
 * #MAX_DEPTH} deep, and at most {@link #MAX_WHITESPACE} whitespace bytes in a row ({@link
 * #MAX_LEADING_WHITESPACE} before the object), since a model that prefers whitespace would
 * otherwise never end.
 */
public final class JsonPrefix {
  public static final int MAX_DEPTH = 128;
  public static final int MAX_WHITESPACE = 16;

  /** Whitespace bytes before the object: one, for vocabularies whose "{" carries a space. */
  public static final int MAX_LEADING_WHITESPACE = 1;

  // What the next byte may be.
  private static final int START = 0; // whitespace or the root's '{'
  private static final int VALUE = 1; // a value (after ':')
  private static final int OBJECT_FIRST = 2; // a key or '}'
  private static final int OBJECT_KEY = 3; // a key (after ',')
  private static final int COLON = 4;
  private static final int AFTER_VALUE = 5; // ',' or the container's closing bracket
  private static final int ARRAY_FIRST = 6; // a value or ']'
  private static final int STRING = 7;
  private static final int ESCAPE = 8; // after '\'
  private static final int UNICODE = 9; // hex digits of '\\u'
  private static final int UTF8 = 10; // continuation bytes of a character
  private static final int MINUS = 11; // after '-'
  private static final int ZERO = 12; // after a leading '0'
  private static final int INTEGER = 13;
  private static final int POINT = 14; // after '.'
  private static final int FRACTION = 15;
  private static final int EXPONENT = 16; // after 'e'
  private static final int EXPONENT_SIGN = 17;
  private static final int EXPONENT_DIGITS = 18;
  private static final int LITERAL = 19; // inside true, false or null
  private static final int DONE = 20;

  private static final byte[][] LITERALS = {
    {'t', 'r', 'u', 'e'}, {'f', 'a', 'l', 's', 'e'}, {'n', 'u', 'l', 'l'}
  };

  private int mode = START;
  private int depth;
  // One bit per open container, 1 for an array: bit i of stack[i >> 6].
  private long stackLow;
  private long stackHigh;
  private boolean key; // the string being read is an object key
  private int left; // hex digits or UTF-8 continuation bytes still due; a literal's position
  private int literal;
  private int nextLow; // the range of the next UTF-8 continuation byte
  private int nextHigh;
  private int whitespace; // whitespace bytes in a row

  /** Whether the root object is complete: nothing may follow. */
  public boolean isComplete() {
    return mode == DONE;
  }

  /**
   * Whether the bytes so far are inside a string where a byte run that leaves the state as it was
   * (see {@link JsonVocabulary}) may follow.
   */
  boolean inPlainString() {
    return mode == STRING;
  }

  /** Makes this state equal to {@code o}. */
  public void copyFrom(JsonPrefix o) {
    mode = o.mode;
    depth = o.depth;
    stackLow = o.stackLow;
    stackHigh = o.stackHigh;
    key = o.key;
    left = o.left;
    literal = o.literal;
    nextLow = o.nextLow;
    nextHigh = o.nextHigh;
    whitespace = o.whitespace;
  }

  /** A state at a character of a string, for classifying tokens. */
  static JsonPrefix inString() {
    JsonPrefix p = new JsonPrefix();
    p.mode = STRING;
    p.depth = 1;
    return p;
  }

  /**
   * Whether the bytes so far end inside a string (at a character, an escape or within either),
   * where the next bytes cannot see whether it is a key or how deep it is.
   */
  boolean insideString() {
    return mode == STRING || mode == ESCAPE || mode == UNICODE || mode == UTF8;
  }

  /** Feeds {@code bytes[from..to)}; false at the first byte that cannot follow. */
  public boolean accept(byte[] bytes, int from, int to) {
    for (int i = from; i < to; i++) {
      if (!accept(bytes[i])) {
        return false;
      }
    }
    return true;
  }

  /**
   * Feeds one byte. Returns false when it cannot follow the bytes so far; the state is then
   * undefined, and a caller that goes on copies an earlier one back.
   */
  public boolean accept(byte value) {
    int b = value & 0xff;
    switch (mode) {
      case STRING:
        return string(b);
      case START:
        if (b == '{') {
          return open(false, OBJECT_FIRST);
        }
        return space(b);
      case VALUE:
        return value(b) || space(b);
      case OBJECT_FIRST:
        if (b == '}') {
          return close();
        }
        return keyStart(b) || space(b);
      case OBJECT_KEY:
        return keyStart(b) || space(b);
      case COLON:
        if (b == ':') {
          whitespace = 0;
          mode = VALUE;
          return true;
        }
        return space(b);
      case AFTER_VALUE:
        return afterValue(b);
      case ARRAY_FIRST:
        if (b == ']') {
          return close();
        }
        return value(b) || space(b);
      case ESCAPE:
        return escape(b);
      case UNICODE:
        if (!isHex(b)) {
          return false;
        }
        if (--left == 0) {
          mode = STRING;
        }
        return true;
      case UTF8:
        if (b < nextLow || b > nextHigh) {
          return false;
        }
        nextLow = 0x80;
        nextHigh = 0xbf;
        if (--left == 0) {
          mode = STRING;
        }
        return true;
      case LITERAL:
        return literal(b);
      case DONE:
        return false;
      default:
        return number(b);
    }
  }

  private boolean space(int b) {
    int limit = mode == START ? MAX_LEADING_WHITESPACE : MAX_WHITESPACE;
    if ((b == ' ' || b == '\n' || b == '\r' || b == '\t') && whitespace < limit) {
      whitespace++;
      return true;
    }
    return false;
  }

  private boolean keyStart(int b) {
    if (b != '"') {
      return false;
    }
    key = true;
    mode = STRING;
    return true;
  }

  /** The first byte of a value, or false. */
  private boolean value(int b) {
    whitespace = 0;
    switch (b) {
      case '{':
        return open(false, OBJECT_FIRST);
      case '[':
        return open(true, ARRAY_FIRST);
      case '"':
        key = false;
        mode = STRING;
        return true;
      case '-':
        mode = MINUS;
        return true;
      case '0':
        mode = ZERO;
        return true;
      case 't':
        return literalStart(0);
      case 'f':
        return literalStart(1);
      case 'n':
        return literalStart(2);
      default:
        if (b >= '1' && b <= '9') {
          mode = INTEGER;
          return true;
        }
        return false;
    }
  }

  private boolean literalStart(int which) {
    literal = which;
    left = 1;
    mode = LITERAL;
    return true;
  }

  private boolean literal(int b) {
    byte[] word = LITERALS[literal];
    if (b != word[left]) {
      return false;
    }
    if (++left == word.length) {
      valueEnd();
    }
    return true;
  }

  private boolean afterValue(int b) {
    boolean inArray = top();
    if (b == ',') {
      whitespace = 0;
      mode = inArray ? VALUE : OBJECT_KEY;
      return true;
    }
    if (b == (inArray ? ']' : '}')) {
      return close();
    }
    return space(b);
  }

  private boolean open(boolean array, int next) {
    if (depth == MAX_DEPTH) {
      return false;
    }
    long bit = 1L << (depth & 63);
    if (depth < 64) {
      stackLow = array ? stackLow | bit : stackLow & ~bit;
    } else {
      stackHigh = array ? stackHigh | bit : stackHigh & ~bit;
    }
    depth++;
    whitespace = 0;
    mode = next;
    return true;
  }

  /** Whether the innermost open container is an array. */
  private boolean top() {
    int i = depth - 1;
    long word = i < 64 ? stackLow : stackHigh;
    return (word >>> (i & 63) & 1) != 0;
  }

  private boolean close() {
    depth--;
    whitespace = 0;
    valueEnd();
    return true;
  }

  private void valueEnd() {
    mode = depth == 0 ? DONE : AFTER_VALUE;
  }

  private boolean string(int b) {
    if (b == '"') {
      if (key) {
        mode = COLON;
        whitespace = 0;
      } else {
        valueEnd();
      }
      return true;
    }
    if (b == '\\') {
      mode = ESCAPE;
      return true;
    }
    if (b < 0x20) {
      return false;
    }
    if (b < 0x80) {
      return true;
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
    return false;
  }

  private boolean utf8(int continuations, int low, int high) {
    left = continuations;
    nextLow = low;
    nextHigh = high;
    mode = UTF8;
    return true;
  }

  private boolean escape(int b) {
    switch (b) {
      case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
        mode = STRING;
        return true;
      case 'u':
        left = 4;
        mode = UNICODE;
        return true;
      default:
        return false;
    }
  }

  private static boolean isHex(int b) {
    return b >= '0' && b <= '9' || b >= 'a' && b <= 'f' || b >= 'A' && b <= 'F';
  }

  /** A byte after a number's first: more of the number, or, where it may end, what follows it. */
  private boolean number(int b) {
    boolean digit = b >= '0' && b <= '9';
    switch (mode) {
      case MINUS:
        if (digit) {
          mode = b == '0' ? ZERO : INTEGER;
        }
        return digit;
      case ZERO:
        return fractionOrExponent(b) || endNumber(b);
      case INTEGER:
        return digit || fractionOrExponent(b) || endNumber(b);
      case POINT:
        if (digit) {
          mode = FRACTION;
        }
        return digit;
      case FRACTION:
        if (b == 'e' || b == 'E') {
          mode = EXPONENT;
          return true;
        }
        return digit || endNumber(b);
      case EXPONENT:
        if (b == '+' || b == '-') {
          mode = EXPONENT_SIGN;
          return true;
        }
        if (digit) {
          mode = EXPONENT_DIGITS;
        }
        return digit;
      case EXPONENT_SIGN:
        if (digit) {
          mode = EXPONENT_DIGITS;
        }
        return digit;
      case EXPONENT_DIGITS:
        return digit || endNumber(b);
      default:
        throw new IllegalStateException("mode " + mode);
    }
  }

  private boolean fractionOrExponent(int b) {
    if (b == '.') {
      mode = POINT;
      return true;
    }
    if (b == 'e' || b == 'E') {
      mode = EXPONENT;
      return true;
    }
    return false;
  }

  /** The number ended before {@code b}: {@code b} is read as what follows a value. */
  private boolean endNumber(int b) {
    whitespace = 0;
    mode = AFTER_VALUE;
    return afterValue(b);
  }
}
