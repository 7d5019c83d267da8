package io.flinfer.runtime.tokenizer;

/**
 * A placeholder SentencePiece vocabulary of a given size (control tokens, the 256 byte tokens, then
 * numbered pieces), for random-weight benchmark models whose real vocabulary is not at hand. Text
 * still round-trips through the byte tokens.
 */
public final class SyntheticVocabulary {
  private SyntheticVocabulary() {}

  public static SentencePieceTokenizer of(int size) {
    if (size < 259) {
      throw new IllegalArgumentException(
          "a vocabulary with byte fallback needs at least 259 tokens");
    }
    String[] pieces = new String[size];
    pieces[0] = "<unk>";
    pieces[1] = "<s>";
    pieces[2] = "</s>";
    for (int b = 0; b < 256; b++) {
      pieces[3 + b] = String.format("<0x%02X>", b);
    }
    for (int i = 259; i < size; i++) {
      pieces[i] = "<piece" + i + ">";
    }
    return new SentencePieceTokenizer(pieces, new float[size], null, 1, 2, true, true);
  }
}
