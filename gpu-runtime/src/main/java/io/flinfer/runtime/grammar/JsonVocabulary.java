package io.flinfer.runtime.grammar;

import io.flinfer.runtime.tokenizer.Tokenizer;

/**
 * A vocabulary's tokens as byte runs, arranged so that the tokens that may follow an {@link
 * OutputState} are found without trying each: grouped by first byte (one check rules out a whole
 * group), and split into the tokens that, inside a string, leave the state as it was (plain text:
 * no quote, no control character, whole UTF-8 characters, complete escapes) and the rest. Built
 * once per tokenizer and shared by every request; immutable.
 *
 * <p>Tokens are read as they decode in the middle of a text. Tokens that add no text (control
 * tokens, the end-of-sequence token) never follow: a JSON object ends at its closing brace.
 */
public final class JsonVocabulary {
  private final int size;
  private final byte[][] bytes;
  private final int[] firstByteStart; // tokens with first byte b: byFirstByte[start[b]..start[b+1])
  private final int[] byFirstByte;
  private final long[] plain;
  private final int plainCount;
  private final int[] notPlain;

  private JsonVocabulary(byte[][] bytes) {
    this.size = bytes.length;
    this.bytes = bytes;
    firstByteStart = new int[257];
    for (byte[] b : bytes) {
      if (b.length > 0) {
        firstByteStart[(b[0] & 0xff) + 1]++;
      }
    }
    for (int i = 0; i < 256; i++) {
      firstByteStart[i + 1] += firstByteStart[i];
    }
    byFirstByte = new int[firstByteStart[256]];
    int[] next = firstByteStart.clone();
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
      byFirstByte[next[b[0] & 0xff]++] = t;
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

  /** Whether every byte of {@code b} keeps {@code p} inside its string, ending at a character. */
  private static boolean staysInString(JsonPrefix p, byte[] b) {
    // The same for every JSON grammar: what a free string may hold is JSON's lexical rule.
    for (byte x : b) {
      if (!p.accept(x) || !p.insideString()) {
        return false;
      }
    }
    return p.inPlainString();
  }

  /**
   * Sets in {@code mask} (cleared first) the tokens that may follow {@code state}; returns how
   * many. {@code probe} and {@code scratch} are overwritten.
   */
  int allowed(OutputState state, long[] mask, OutputState probe, OutputState scratch) {
    int count = 0;
    if (state.inPlainString()) {
      System.arraycopy(plain, 0, mask, 0, plain.length);
      count = plainCount;
      for (int t : notPlain) {
        probe.copyFrom(state);
        if (probe.accept(bytes[t], 0, bytes[t].length)) {
          mask[t >>> 6] |= 1L << t;
          count++;
        }
      }
      return count;
    }
    java.util.Arrays.fill(mask, 0, plain.length, 0L);
    for (int first = 0; first < 256; first++) {
      int from = firstByteStart[first];
      int to = firstByteStart[first + 1];
      if (from == to) {
        continue;
      }
      scratch.copyFrom(state);
      if (!scratch.accept((byte) first)) {
        continue;
      }
      for (int i = from; i < to; i++) {
        int t = byFirstByte[i];
        probe.copyFrom(scratch);
        if (probe.accept(bytes[t], 1, bytes[t].length)) {
          mask[t >>> 6] |= 1L << t;
          count++;
        }
      }
    }
    return count;
  }
}
