package io.flinfer.runtime.grammar;

/**
 * The characters of free text read from its UTF-8 bytes one at a time (valid UTF-8 only, as in
 * {@link JsonLexicon}'s strings, but every character stands for itself): the output states of
 * regular expressions and grammars hold one and copy it with their own fields.
 */
final class Utf8Reader {
  /** {@link #feed}: the byte cannot come here. */
  static final int REJECT = -1;

  /** {@link #feed}: the byte leaves a character unfinished. */
  static final int INSIDE = -2;

  private int lexical = JsonLexicon.CHARS;
  private int character; // the bits of the character being read

  /** Reads byte {@code b}: the code point it completes, {@link #INSIDE} or {@link #REJECT}. */
  int feed(int b) {
    if (lexical == JsonLexicon.CHARS && b < 0x80) {
      return b; // the common case kept short: masks try it for every token
    }
    int next = JsonLexicon.text(lexical, b);
    if (next == JsonLexicon.REJECT) {
      return REJECT;
    }
    character = JsonLexicon.character(lexical, b, character);
    lexical = next;
    return next == JsonLexicon.CHARS ? character : INSIDE;
  }

  /** Whether the bytes so far end at a character's end. */
  boolean atBoundary() {
    return lexical == JsonLexicon.CHARS;
  }

  /** Inside a character: the code points it can still become, as {@code lowest << 32 | highest}. */
  long completions() {
    return JsonLexicon.completions(lexical, character);
  }

  void copyFrom(Utf8Reader other) {
    lexical = other.lexical;
    character = other.character;
  }
}
