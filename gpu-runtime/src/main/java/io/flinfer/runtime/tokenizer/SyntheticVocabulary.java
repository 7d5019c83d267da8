package io.flinfer.runtime.tokenizer;

/**
 * A placeholder SentencePiece vocabulary of a given size (control tokens, the 256 byte tokens, then
 * numbered pieces), for random-weight benchmark models whose real vocabulary is not at hand. Text
 * still round-trips through the byte tokens.
 */
public final class SyntheticVocabulary {
  private SyntheticVocabulary() {}

  /** Writes {@code of(size)} as a llama2.c {@code tokenizer.bin}, so it can travel as a file. */
  public static java.nio.file.Path write(int size, java.nio.file.Path file)
      throws java.io.IOException {
    SentencePieceTokenizer t = of(size);
    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
    java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(4).order(java.nio.ByteOrder.LITTLE_ENDIAN);
    out.write(b.putInt(0, 16).array(), 0, 4);
    for (int i = 0; i < size; i++) {
      byte[] piece =
          (i <= 2 || (i >= 3 && i < 259))
              ? pieceText(i).getBytes(java.nio.charset.StandardCharsets.UTF_8)
              : t.piece(i).getBytes(java.nio.charset.StandardCharsets.UTF_8);
      out.write(b.putFloat(0, 0f).array(), 0, 4);
      out.write(b.putInt(0, piece.length).array(), 0, 4);
      out.write(piece, 0, piece.length);
    }
    java.nio.file.Files.write(file, out.toByteArray());
    return file;
  }

  private static String pieceText(int i) {
    return i == 0 ? "<unk>" : i == 1 ? "<s>" : i == 2 ? "</s>" : String.format("<0x%02X>", i - 3);
  }

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
