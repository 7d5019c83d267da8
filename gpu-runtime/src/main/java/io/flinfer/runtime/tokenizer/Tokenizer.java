package io.flinfer.runtime.tokenizer;

/** Text to token ids and back. Owns a vocabulary. */
public interface Tokenizer {

  int vocabSize();

  /** The beginning-of-sequence id, or -1. */
  int bosId();

  /** The end-of-sequence id, or -1. */
  int eosId();

  /**
   * The tokens that end a generation (llama.cpp's "end of generation" set): the end-of-sequence
   * token, and where the model has them its end-of-turn and end-of-message tokens.
   */
  default int[] endTokens() {
    return eosId() >= 0 ? new int[] {eosId()} : new int[0];
  }

  /** Whether the model expects a BOS token before a prompt. */
  boolean addBos();

  /**
   * Encodes {@code text}, with the BOS token first when {@code addBos}. Special-token text in it
   * ({@code <|eot_id|>}, ...) stays text: a user's text cannot forge a control token.
   */
  default int[] encode(String text, boolean addBos) {
    return encode(text, addBos, false);
  }

  /**
   * Encodes {@code text}; with {@code parseSpecial}, special-token text in it becomes that token
   * (as in a rendered chat template).
   *
   * @throws IllegalArgumentException when a character has no token and the vocabulary no byte
   *     fallback
   */
  int[] encode(String text, boolean addBos, boolean parseSpecial);

  /**
   * The bytes that token {@code token} adds to the text when it follows {@code previous} (-1 at the
   * start). Control tokens add nothing. A piece may end inside a UTF-8 character.
   */
  byte[] pieceBytes(int previous, int token);

  /** The text of a whole sequence of ids. */
  default String decode(int[] ids) {
    TextDecoder d = new TextDecoder(this);
    StringBuilder sb = new StringBuilder();
    for (int id : ids) {
      sb.append(d.next(id));
    }
    return sb.append(d.flush()).toString();
  }
}
