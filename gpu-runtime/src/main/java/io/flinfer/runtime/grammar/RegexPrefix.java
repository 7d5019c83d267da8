package io.flinfer.runtime.grammar;

/**
 * Reads UTF-8 bytes and says whether they are still the start of an output that a {@link
 * RegexGrammar} matches: the automaton's state after the whole characters so far, and the character
 * being read. A byte inside a character is taken only where the character it begins can still be
 * one the automaton takes. Every state of the automaton can reach a match, so no output begun is
 * left without a way to end.
 */
final class RegexPrefix extends OutputState {
  // Not final: a copy takes the other's pattern, so that one set of states walks any pattern.
  private StringPattern pattern;
  private int state;
  private final Utf8Reader text = new Utf8Reader();

  RegexPrefix(StringPattern pattern) {
    this(pattern, pattern.start());
  }

  /** Between characters, in the pattern's {@code state}. */
  RegexPrefix(StringPattern pattern, int state) {
    this.pattern = pattern;
    this.state = state;
  }

  @Override
  public boolean accept(byte value) {
    int c = text.feed(value & 0xff);
    if (c >= 0) {
      state = pattern.step(state, c);
      return state >= 0;
    }
    if (c == Utf8Reader.REJECT) {
      return false;
    }
    long range = text.completions();
    return pattern.canStep(state, (int) (range >>> 32), (int) range, Integer.MAX_VALUE);
  }

  @Override
  public boolean isComplete() {
    return mayEnd() && !pattern.hasNext(state, Integer.MAX_VALUE);
  }

  @Override
  public boolean mayEnd() {
    return text.atBoundary() && pattern.accepts(state);
  }

  /** Between characters, the automaton's state decides what follows. */
  @Override
  int maskKey() {
    return text.atBoundary() ? state : -1;
  }

  @Override
  StringPattern textPattern() {
    return text.atBoundary() ? pattern : null;
  }

  @Override
  int patternState() {
    return state;
  }

  @Override
  int plainRoom() {
    return -1; // each character steps the automaton
  }

  @Override
  public void copyFrom(OutputState other) {
    RegexPrefix o = (RegexPrefix) other;
    pattern = o.pattern;
    state = o.state;
    text.copyFrom(o.text);
  }

  @Override
  public RegexPrefix fresh() {
    return new RegexPrefix(pattern);
  }
}
