package io.flinfer.runtime.grammar;

/**
 * Reads UTF-8 bytes and says whether they are still the start of an output that a {@link
 * RegexGrammar} matches: the automaton's state after the whole characters so far, and the character
 * being read. A byte inside a character is taken only where the character it begins can still be
 * one the automaton takes. Every state of the automaton can reach a match, so no output begun is
 * left without a way to end.
 */
final class RegexPrefix extends OutputState {
  private final StringPattern pattern;
  private int state;
  private int lexical = JsonLexicon.CHARS; // JsonLexicon's text state: inside a character or not
  private int character; // the bits of the character being read

  RegexPrefix(StringPattern pattern) {
    this.pattern = pattern;
    this.state = pattern.start();
  }

  @Override
  public boolean accept(byte value) {
    int b = value & 0xff;
    if (lexical == JsonLexicon.CHARS && b < 0x80) {
      state = pattern.step(state, b); // the common case kept short: masks try it for every token
      return state >= 0;
    }
    int next = JsonLexicon.text(lexical, b);
    if (next == JsonLexicon.REJECT) {
      return false;
    }
    character = JsonLexicon.character(lexical, b, character);
    lexical = next;
    if (next == JsonLexicon.CHARS) {
      state = pattern.step(state, character);
      return state >= 0;
    }
    long c = JsonLexicon.completions(next, character);
    return pattern.canStep(state, (int) (c >>> 32), (int) c, Integer.MAX_VALUE);
  }

  @Override
  public boolean isComplete() {
    return mayEnd() && !pattern.hasNext(state, Integer.MAX_VALUE);
  }

  @Override
  public boolean mayEnd() {
    return lexical == JsonLexicon.CHARS && pattern.accepts(state);
  }

  /** Between characters, the automaton's state decides what follows. */
  @Override
  int maskKey() {
    return lexical == JsonLexicon.CHARS ? state : -1;
  }

  @Override
  int maskKeys() {
    return pattern.size();
  }

  @Override
  int plainRoom() {
    return -1; // each character steps the automaton
  }

  @Override
  public void copyFrom(OutputState other) {
    RegexPrefix o = (RegexPrefix) other;
    state = o.state;
    lexical = o.lexical;
    character = o.character;
  }

  @Override
  public RegexPrefix fresh() {
    return new RegexPrefix(pattern);
  }
}
