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
public final class JsonPrefix extends OutputState {
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
  private static final int STRING = 7; // inside a string, in lexical state lex
  private static final int NUMBER = 8; // inside a number, in lexical state lex
  private static final int LITERAL = 9; // inside true, false or null
  private static final int DONE = 10;

  private static final byte[][] LITERALS = {
    {'t', 'r', 'u', 'e'}, {'f', 'a', 'l', 's', 'e'}, {'n', 'u', 'l', 'l'}
  };

  private int mode = START;
  private int depth;
  // One bit per open container, 1 for an array: bit i of stack[i >> 6].
  private long stackLow;
  private long stackHigh;
  private boolean key; // the string being read is an object key
  private int lex; // JsonLexicon's state inside a string or number
  private int left; // a literal's position
  private int literal;
  private int whitespace; // whitespace bytes in a row
  // The request's states given a mask key so far; shared by the states made from this one.
  private final Keys keys;

  /** Before the object's first byte. */
  public JsonPrefix() {
    this(new Keys());
  }

  private JsonPrefix(Keys keys) {
    this.keys = keys;
  }

  /**
   * The states of one request that have a mask key: the whole state decides which tokens may follow
   * (a token may close several containers), so equal states share a key, given in order, up to
   * {@link #MOST}; later states have none.
   */
  private static final class Keys {
    static final int MOST = 4_096;

    private final IntRuns given = new IntRuns(MOST);
    private final int[] state = new int[11];

    int of(JsonPrefix p) {
      state[0] = p.mode;
      state[1] = p.depth;
      state[2] = p.key ? 1 : 0;
      state[3] = p.lex;
      state[4] = p.left;
      state[5] = p.literal;
      state[6] = p.whitespace;
      state[7] = (int) p.stackLow;
      state[8] = (int) (p.stackLow >>> 32);
      state[9] = (int) p.stackHigh;
      state[10] = (int) (p.stackHigh >>> 32);
      return given.of(state, state.length);
    }
  }

  /** The whole state decides the tokens that may follow: equal states share a key. */
  @Override
  int maskKey() {
    return keys.of(this);
  }

  /** Whether the root object is complete: nothing may follow. */
  @Override
  public boolean isComplete() {
    return mode == DONE;
  }

  /** Inside a string, at a character: any plain run may follow (strings have no bound here). */
  @Override
  int plainRoom() {
    return mode == STRING && lex == JsonLexicon.CHARS ? Integer.MAX_VALUE : -1;
  }

  @Override
  public JsonPrefix fresh() {
    return new JsonPrefix(keys);
  }

  @Override
  public void copyFrom(OutputState other) {
    JsonPrefix o = (JsonPrefix) other;
    mode = o.mode;
    depth = o.depth;
    stackLow = o.stackLow;
    stackHigh = o.stackHigh;
    key = o.key;
    lex = o.lex;
    left = o.left;
    literal = o.literal;
    whitespace = o.whitespace;
  }

  /**
   * Starts one JSON value of any kind (a schema's free value), its first byte next; it is complete
   * when the value is, except a number, which ends at the byte after it ({@link #endsNumberAt}).
   */
  void startValue() {
    mode = VALUE;
    depth = 0;
    whitespace = 0;
  }

  /** Whether {@code b} ends a number that is the whole value ({@link #startValue}), unread. */
  boolean endsNumberAt(byte b) {
    return mode == NUMBER
        && depth == 0
        && JsonLexicon.number(lex, b & 0xff, true) == JsonLexicon.END;
  }

  /** A state at a character of a string, for classifying tokens. */
  static JsonPrefix inString() {
    JsonPrefix p = new JsonPrefix();
    p.mode = STRING;
    p.lex = JsonLexicon.CHARS;
    p.depth = 1;
    return p;
  }

  /**
   * Whether the bytes so far end inside a string (at a character, an escape or within either),
   * where the next bytes cannot see whether it is a key or how deep it is.
   */
  boolean insideString() {
    return mode == STRING;
  }

  @Override
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
      case NUMBER:
        return number(b);
      case LITERAL:
        return literal(b);
      default: // DONE
        return false;
    }
  }

  private boolean space(int b) {
    int limit = mode == START ? MAX_LEADING_WHITESPACE : MAX_WHITESPACE;
    if (JsonLexicon.isSpace(b) && whitespace < limit) {
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
    lex = JsonLexicon.CHARS;
    mode = STRING;
    return true;
  }

  /** The first byte of a value, or false. */
  private boolean value(int b) {
    if (!valueStart(b)) {
      return false;
    }
    whitespace = 0;
    return true;
  }

  private boolean valueStart(int b) {
    switch (b) {
      case '{':
        return open(false, OBJECT_FIRST);
      case '[':
        return open(true, ARRAY_FIRST);
      case '"':
        key = false;
        lex = JsonLexicon.CHARS;
        mode = STRING;
        return true;
      case 't':
        return literalStart(0);
      case 'f':
        return literalStart(1);
      case 'n':
        return literalStart(2);
      default:
        int start = JsonLexicon.numberStart(b);
        if (start == JsonLexicon.REJECT) {
          return false;
        }
        lex = start;
        mode = NUMBER;
        return true;
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
    int next = JsonLexicon.string(lex, b);
    if (next == JsonLexicon.END) {
      if (key) {
        mode = COLON;
        whitespace = 0;
      } else {
        valueEnd();
      }
      return true;
    }
    lex = next;
    return next != JsonLexicon.REJECT;
  }

  private boolean number(int b) {
    int next = JsonLexicon.number(lex, b, true);
    if (next == JsonLexicon.END) {
      return endNumber(b);
    }
    lex = next;
    return next != JsonLexicon.REJECT;
  }

  /** The number ended before {@code b}: {@code b} is read as what follows a value. */
  private boolean endNumber(int b) {
    whitespace = 0;
    mode = AFTER_VALUE;
    return afterValue(b);
  }
}
