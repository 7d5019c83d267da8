package io.flinfer.runtime.grammar;

import io.flinfer.runtime.tokenizer.Tokenizer;

/**
 * A vocabulary's tokens as byte runs, arranged so that the tokens that may follow an {@link
 * OutputState} are found without trying each: in a trie ({@link TokenTrie}, each shared prefix fed
 * once, a refused byte ruling out every token below it), and split into the tokens that, inside a
 * string, leave the state as it was (plain text: no quote, no control character, whole UTF-8
 * characters, complete escapes) and the rest. Built once per tokenizer and shared by every request;
 * immutable but for the tokens of pattern states it keeps ({@link KeptRuns}, thread-safe).
 *
 * <p>Tokens are read as they decode in the middle of a text. Tokens that add no text (control
 * tokens, the end-of-sequence token) never follow: a JSON object ends at its closing brace.
 */
public final class JsonVocabulary {
  private final int size;
  private final byte[][] bytes;
  private final TokenTrie all;
  private final long[] plain;
  private final int plainCount;
  private final TokenTrie notPlain;
  // Plain runs without escapes, whose bytes are the characters they write, and those with them.
  private final long[] literal;
  private final TokenTrie escaping;
  private final KeptRuns keptRuns = new KeptRuns();
  // Plain tokens by how many characters they add: shortPlain[c] holds those of at most c
  // characters (c < SHORT), shortCount[c] how many; the longer ones are listed with their counts.
  private final long[][] shortPlain;
  private final int[] shortCount;
  private final int[] longPlain;
  private final int[] longChars;
  // Tokens without '>' (any may follow inside a thought) and those with it.
  private final long[] withoutTagEnd;
  private final int withoutTagEndCount;
  private final TokenTrie withTagEnd;

  /** Plain runs of fewer characters than this have a mask ready for a bounded string. */
  private static final int SHORT = 16;

  private JsonVocabulary(byte[][] bytes) {
    this.size = bytes.length;
    this.bytes = bytes;
    plain = new long[words(size)];
    int[] any = new int[size];
    int anyCount = 0;
    int plainTokens = 0;
    JsonPrefix probe = new JsonPrefix();
    JsonPrefix inString = JsonPrefix.inString();
    for (int t = 0; t < size; t++) {
      byte[] b = bytes[t];
      if (b.length == 0) {
        continue;
      }
      any[anyCount++] = t;
      probe.copyFrom(inString);
      if (staysInString(probe, b)) {
        plain[t >>> 6] |= 1L << t;
        plainTokens++;
      }
    }
    plainCount = plainTokens;
    // One sort; each subset keeps its order.
    int[] order = TokenTrie.sorted(bytes, java.util.Arrays.copyOf(any, anyCount));
    all = TokenTrie.of(bytes, order);
    notPlain = TokenTrie.of(bytes, without(order, plain));
    literal = plain.clone();
    for (int t = 0; t < size; t++) {
      for (byte x : bytes[t]) {
        if (x == '\\') {
          literal[t >>> 6] &= ~(1L << t);
        }
      }
    }
    long[] notEscaping = literal.clone();
    for (int w = 0; w < notEscaping.length; w++) {
      notEscaping[w] |= ~plain[w];
    }
    escaping = TokenTrie.of(bytes, without(order, notEscaping));
    shortPlain = new long[SHORT][words(size)];
    shortCount = new int[SHORT];
    int[] longTokens = new int[plainTokens];
    int[] longCounts = new int[plainTokens];
    int longs = 0;
    for (int t = 0; t < size; t++) {
      if ((plain[t >>> 6] & 1L << t) == 0) {
        continue;
      }
      int chars = characters(bytes[t]);
      if (chars >= SHORT) {
        longTokens[longs] = t;
        longCounts[longs++] = chars;
        continue;
      }
      for (int c = chars; c < SHORT; c++) {
        shortPlain[c][t >>> 6] |= 1L << t;
        shortCount[c]++;
      }
    }
    longPlain = java.util.Arrays.copyOf(longTokens, longs);
    longChars = java.util.Arrays.copyOf(longCounts, longs);
    withoutTagEnd = new long[words(size)];
    int free = 0;
    for (int t = 0; t < size; t++) {
      byte[] b = bytes[t];
      if (b.length == 0) {
        continue;
      }
      boolean endsTag = false;
      for (byte x : b) {
        endsTag |= x == '>';
      }
      if (!endsTag) {
        withoutTagEnd[t >>> 6] |= 1L << t;
        free++;
      }
    }
    withoutTagEndCount = free;
    withTagEnd = TokenTrie.of(bytes, without(order, withoutTagEnd));
  }

  /** The tokens of {@code order} not in {@code mask}, in their order. */
  private static int[] without(int[] order, long[] mask) {
    return java.util.Arrays.stream(order).filter(t -> (mask[t >>> 6] & 1L << t) == 0).toArray();
  }

  /** How many characters a plain run adds to a string: each return to a character boundary. */
  private static int characters(byte[] b) {
    int state = JsonLexicon.CHARS;
    int count = 0;
    for (byte x : b) {
      state = JsonLexicon.string(state, x & 0xff);
      if (state == JsonLexicon.CHARS) {
        count++;
      }
    }
    return count;
  }

  /** The table of {@code tokenizer}'s vocabulary. */
  public static JsonVocabulary of(Tokenizer tokenizer) {
    byte[][] bytes = new byte[tokenizer.vocabSize()][];
    for (int t = 0; t < bytes.length; t++) {
      // Any id that is not BOS stands for "a token before": the text's middle.
      bytes[t] = tokenizer.pieceBytes(Integer.MAX_VALUE, t);
    }
    return new JsonVocabulary(bytes);
  }

  /** A table of the given byte runs, token {@code t} being {@code bytes[t]}. */
  public static JsonVocabulary of(byte[][] bytes) {
    return new JsonVocabulary(bytes.clone());
  }

  /** Words of a mask over {@code tokens} tokens. */
  public static int words(int tokens) {
    return (tokens + 63) >>> 6;
  }

  public int size() {
    return size;
  }

  /** Token {@code t}'s bytes. */
  byte[] bytes(int t) {
    return bytes[t];
  }

  /** The tokens of pattern states found so far, for every request of this vocabulary. */
  KeptRuns keptRuns() {
    return keptRuns;
  }

  /** Sets in {@code mask} the plain runs of at most {@code room} characters; returns how many. */
  private int plainRuns(int room, long[] mask) {
    if (room < SHORT) {
      System.arraycopy(shortPlain[room], 0, mask, 0, plain.length);
      return shortCount[room];
    }
    System.arraycopy(plain, 0, mask, 0, plain.length);
    int count = plainCount;
    for (int i = 0; i < longPlain.length; i++) {
      if (longChars[i] > room) {
        mask[longPlain[i] >>> 6] &= ~(1L << longPlain[i]);
        count--;
      }
    }
    return count;
  }

  /**
   * Sets in {@code mask} (cleared first) the plain runs without escapes whose characters {@code
   * pattern} takes from its state {@code from}; returns how many. {@code stack} and {@code probe}
   * hold regex states ({@link RegexPrefix}) and are overwritten.
   */
  int patternRuns(
      StringPattern pattern, int from, long[] mask, OutputState[] stack, OutputState probe) {
    java.util.Arrays.fill(mask, 0, plain.length, 0L);
    // Such runs are whole characters, written as they read, so the regex reads them as the string
    // does; the walk takes other tokens too, which the set then leaves out.
    all.allow(new RegexPrefix(pattern, from), mask, stack, probe);
    int count = 0;
    for (int w = 0; w < plain.length; w++) {
      mask[w] &= literal[w];
      count += Long.bitCount(mask[w]);
    }
    return count;
  }

  /**
   * For the runs in {@code mask} (plain, without escapes, each taken by {@code pattern} from {@code
   * from}): each run's room, the fewest characters a string must have left for it to be taken
   * there, the most over its characters of how many it has written plus the fewest that then lead
   * to a match. The runs ordered by room, largest first, and their rooms.
   */
  int[][] runRooms(StringPattern pattern, int from, long[] mask) {
    int n = 0;
    for (int w = 0; w < plain.length; w++) {
      n += Long.bitCount(mask[w]);
    }
    long[] keyed = new long[n];
    int k = 0;
    for (int w = 0; w < plain.length; w++) {
      for (long bits = mask[w]; bits != 0; bits &= bits - 1) {
        int t = w << 6 | Long.numberOfTrailingZeros(bits);
        int state = from;
        int written = 0;
        int room = 0;
        byte[] run = bytes[t];
        // Plain runs are whole, valid UTF-8 characters.
        for (int i = 0; i < run.length; ) {
          int lead = run[i++] & 0xff;
          int c =
              lead < 0x80
                  ? lead
                  : lead < 0xe0 ? lead & 0x1f : lead < 0xf0 ? lead & 0x0f : lead & 0x07;
          while (i < run.length && (run[i] & 0xc0) == 0x80) {
            c = c << 6 | run[i++] & 0x3f;
          }
          state = pattern.step(state, c);
          room = Math.max(room, ++written + pattern.fewestToAccept(state));
        }
        keyed[k++] = (long) room << 32 | t;
      }
    }
    java.util.Arrays.sort(keyed);
    int[][] out = new int[2][n];
    for (int i = 0; i < n; i++) {
      long e = keyed[n - 1 - i];
      out[0][i] = (int) e;
      out[1][i] = (int) (e >>> 32);
    }
    return out;
  }

  /** Whether every byte of {@code b} keeps {@code p} inside its string, ending at a character. */
  private static boolean staysInString(JsonPrefix p, byte[] b) {
    // The same for every JSON grammar: what a free string may hold is JSON's lexical rule.
    for (byte x : b) {
      if (!p.accept(x) || !p.insideString()) {
        return false;
      }
    }
    return p.plainRoom() >= 0;
  }

  /**
   * Sets in {@code mask} (cleared first) the tokens that may follow {@code state}; returns how
   * many. {@code stack} ({@link TokenTrie#DEPTH} + 1 states of {@code state}'s kind) and {@code
   * probe} are overwritten.
   */
  int allowed(
      OutputState state, long[] mask, OutputState[] stack, OutputState probe, PatternRuns runs) {
    if (state.inFreeText()) {
      System.arraycopy(withoutTagEnd, 0, mask, 0, withoutTagEnd.length);
      return withoutTagEndCount + withTagEnd.allow(state, mask, stack, probe);
    }
    int room = state.plainRoom();
    if (room >= 0) {
      return plainRuns(room, mask) + notPlain.allow(state, mask, stack, probe);
    }
    StringPattern pattern = state.plainPattern();
    if (pattern != null) {
      return runs.plainRuns(this, pattern, state.patternState(), state.patternRoom(), mask)
          + notPlain.allow(state, mask, stack, probe)
          + escaping.allow(state, mask, stack, probe);
    }
    StringPattern text = state.textPattern();
    if (text != null) {
      // A regex's state decides its mask whatever request it is in: kept for every request.
      int n = keptRuns.copy(text, state.patternState(), true, mask, plain.length);
      if (n < 0) {
        java.util.Arrays.fill(mask, 0, plain.length, 0L);
        n = all.allow(state, mask, stack, probe);
        keptRuns.keep(text, state.patternState(), true, mask, plain.length, n);
      }
      return n;
    }
    java.util.Arrays.fill(mask, 0, plain.length, 0L);
    return all.allow(state, mask, stack, probe);
  }
}
