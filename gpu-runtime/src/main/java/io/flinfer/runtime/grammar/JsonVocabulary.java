package io.flinfer.runtime.grammar;

import io.flinfer.runtime.tokenizer.Tokenizer;

/**
 * A vocabulary's tokens as byte runs, arranged so that the tokens that may follow an {@link
 * OutputState} are found without trying each: grouped by their first byte and then their second
 * (one check rules out a whole group), and split into the tokens that, inside a string, leave the
 * state as it was (plain text: no quote, no control character, whole UTF-8 characters, complete
 * escapes) and the rest. Built once per tokenizer and shared by every request; immutable.
 *
 * <p>Tokens are read as they decode in the middle of a text. Tokens that add no text (control
 * tokens, the end-of-sequence token) never follow: a JSON object ends at its closing brace.
 */
public final class JsonVocabulary {
  private final int size;
  private final byte[][] bytes;
  // Tokens by their first two bytes: those with key k are sorted[start[k]..start[k + 1]), where
  // k = first << 9 | (second + 1), or first << 9 for a token of one byte.
  private final int[] keyStart;
  private final int[] sorted;
  private final long[] plain;
  private final int plainCount;
  private final int[] notPlain;
  // Plain tokens by how many characters they add: shortPlain[c] holds those of at most c
  // characters (c < SHORT), shortCount[c] how many; the longer ones are listed with their counts.
  private final long[][] shortPlain;
  private final int[] shortCount;
  private final int[] longPlain;
  private final int[] longChars;
  // Tokens without '>' (any may follow inside a thought) and those with it.
  private final long[] withoutTagEnd;
  private final int withoutTagEndCount;
  private final int[] withTagEnd;

  /** Plain runs of fewer characters than this have a mask ready for a bounded string. */
  private static final int SHORT = 16;

  private JsonVocabulary(byte[][] bytes) {
    this.size = bytes.length;
    this.bytes = bytes;
    keyStart = new int[KEYS + 1];
    for (byte[] b : bytes) {
      if (b.length > 0) {
        keyStart[key(b) + 1]++;
      }
    }
    for (int k = 0; k < KEYS; k++) {
      keyStart[k + 1] += keyStart[k];
    }
    sorted = new int[keyStart[KEYS]];
    int[] next = keyStart.clone();
    plain = new long[words(size)];
    int plainTokens = 0;
    int[] rest = new int[size];
    int restCount = 0;
    JsonPrefix probe = new JsonPrefix();
    JsonPrefix inString = JsonPrefix.inString();
    for (int t = 0; t < size; t++) {
      byte[] b = bytes[t];
      if (b.length == 0) {
        continue;
      }
      sorted[next[key(b)]++] = t;
      probe.copyFrom(inString);
      if (staysInString(probe, b)) {
        plain[t >>> 6] |= 1L << t;
        plainTokens++;
      } else {
        rest[restCount++] = t;
      }
    }
    plainCount = plainTokens;
    notPlain = java.util.Arrays.copyOf(rest, restCount);
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
    int[] tagEnds = new int[size];
    int tagEndCount = 0;
    for (int t = 0; t < size; t++) {
      byte[] b = bytes[t];
      if (b.length == 0) {
        continue;
      }
      boolean endsTag = false;
      for (byte x : b) {
        endsTag |= x == '>';
      }
      if (endsTag) {
        tagEnds[tagEndCount++] = t;
      } else {
        withoutTagEnd[t >>> 6] |= 1L << t;
        free++;
      }
    }
    withoutTagEndCount = free;
    withTagEnd = java.util.Arrays.copyOf(tagEnds, tagEndCount);
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

  private static final int KEYS = 256 << 9;

  private static int key(byte[] b) {
    return (b[0] & 0xff) << 9 | (b.length > 1 ? (b[1] & 0xff) + 1 : 0);
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

  /** Adds to {@code mask} those of {@code tokens} that may follow {@code state}; how many. */
  private int tryEach(int[] tokens, OutputState state, long[] mask, OutputState probe) {
    int count = 0;
    for (int t : tokens) {
      probe.copyFrom(state);
      if (probe.accept(bytes[t], 0, bytes[t].length)) {
        mask[t >>> 6] |= 1L << t;
        count++;
      }
    }
    return count;
  }

  /**
   * Sets in {@code mask} (cleared first) the tokens that may follow {@code state}; returns how
   * many. {@code probe}, {@code first} and {@code second} are overwritten.
   */
  int allowed(
      OutputState state, long[] mask, OutputState probe, OutputState first, OutputState second) {
    if (state.inFreeText()) {
      System.arraycopy(withoutTagEnd, 0, mask, 0, withoutTagEnd.length);
      return withoutTagEndCount + tryEach(withTagEnd, state, mask, probe);
    }
    int count = 0;
    int room = state.plainRoom();
    if (room >= 0) {
      return plainRuns(room, mask) + tryEach(notPlain, state, mask, probe);
    }
    java.util.Arrays.fill(mask, 0, plain.length, 0L);
    // One check rules out every token with a first byte, then every one with a first two bytes.
    for (int b0 = 0; b0 < 256; b0++) {
      int k0 = b0 << 9;
      if (keyStart[k0] == keyStart[k0 + 257]) {
        continue;
      }
      first.copyFrom(state);
      if (!first.accept((byte) b0)) {
        continue;
      }
      for (int i = keyStart[k0]; i < keyStart[k0 + 1]; i++) {
        mask[sorted[i] >>> 6] |= 1L << sorted[i];
        count++;
      }
      for (int b1 = 0; b1 < 256; b1++) {
        int from = keyStart[k0 + b1 + 1];
        int to = keyStart[k0 + b1 + 2];
        if (from == to) {
          continue;
        }
        second.copyFrom(first);
        if (!second.accept((byte) b1)) {
          continue;
        }
        for (int i = from; i < to; i++) {
          int t = sorted[i];
          probe.copyFrom(second);
          if (probe.accept(bytes[t], 2, bytes[t].length)) {
            mask[t >>> 6] |= 1L << t;
            count++;
          }
        }
      }
    }
    return count;
  }
}
