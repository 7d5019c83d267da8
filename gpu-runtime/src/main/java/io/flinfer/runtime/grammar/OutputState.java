package io.flinfer.runtime.grammar;

/**
 * A byte-level recognizer of the start of an output of a given shape. Its whole state is a few
 * fields, copied without allocating, so a mask tries each candidate token on a copy.
 */
public abstract class OutputState {

  /**
   * Feeds one byte. Returns false when it cannot follow the bytes so far; the state is then
   * undefined, and a caller that goes on copies an earlier one back.
   */
  public abstract boolean accept(byte value);

  /** Feeds {@code bytes[from..to)}; false at the first byte that cannot follow. */
  public final boolean accept(byte[] bytes, int from, int to) {
    for (int i = from; i < to; i++) {
      if (!accept(bytes[i])) {
        return false;
      }
    }
    return true;
  }

  /** Whether the output is complete: nothing may follow. */
  public abstract boolean isComplete();

  /**
   * Whether the output may end here though more may follow (a regular expression that has matched
   * so far), so that the tokens that end a request may come next too. A JSON value ends only where
   * it is complete.
   */
  public boolean mayEnd() {
    return false;
  }

  /**
   * Where the bytes so far end at a character of a string whose content is free, so that every byte
   * run that stays inside a string and ends at a character (see {@link JsonVocabulary}) may follow
   * if it is short enough: how many characters such a run may add ({@link Integer#MAX_VALUE} for
   * any number); elsewhere -1.
   */
  abstract int plainRoom();

  /**
   * Where the bytes so far end at a character of a string whose characters step a pattern, that
   * pattern: every plain run without escapes (see {@link JsonVocabulary}) whose characters it takes
   * from {@link #patternState} may follow, whatever else the state holds, if it leaves a match
   * within {@link #patternRoom} characters at each of its characters. Elsewhere null.
   */
  StringPattern plainPattern() {
    return null;
  }

  /**
   * Where {@link #plainPattern} is not null, the characters the string may still take ({@link
   * Integer#MAX_VALUE} for any number).
   */
  int patternRoom() {
    return Integer.MAX_VALUE;
  }

  /**
   * Where the bytes so far end between characters of a text that a pattern alone decides (a regular
   * expression's output), that pattern: the tokens whose text it takes from {@link #patternState}
   * may follow, and no others. Elsewhere null.
   */
  StringPattern textPattern() {
    return null;
  }

  /** The pattern's state where {@link #plainPattern} or {@link #textPattern} is not null. */
  int patternState() {
    return -1;
  }

  /**
   * Whether the bytes so far end inside free text that only a {@code '>'} can end (a reasoning
   * model's thought), so that every token without that byte may follow.
   */
  boolean inFreeText() {
    return false;
  }

  /**
   * A number that decides, with the vocabulary, which tokens may follow here, the same for every
   * state of this request's shape with the same tokens to follow (so that a mask made once serves
   * each return to it: {@link MaskCache}), or -1 where the state has none.
   */
  int maskKey() {
    return -1;
  }

  /** Makes this state equal to {@code other}, a state of the same kind and shape. */
  public abstract void copyFrom(OutputState other);

  /** A new state of the same kind and shape, before any byte. */
  public abstract OutputState fresh();
}
