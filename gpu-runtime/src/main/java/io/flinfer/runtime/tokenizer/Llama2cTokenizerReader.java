package io.flinfer.runtime.tokenizer;

import io.flinfer.runtime.model.ModelFormatException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Reads llama2.c {@code tokenizer.bin} files: int32 max token length, then per token a float32
 * score, an int32 byte length and the UTF-8 bytes. BOS is id 1, EOS id 2.
 */
public final class Llama2cTokenizerReader {
  private Llama2cTokenizerReader() {}

  public static SentencePieceTokenizer read(Path file, int vocabSize) {
    String name = file.toString();
    ByteBuffer b;
    try {
      b = ByteBuffer.wrap(Files.readAllBytes(file)).order(ByteOrder.LITTLE_ENDIAN);
    } catch (IOException e) {
      throw new ModelFormatException(name, "cannot read tokenizer: " + e.getMessage(), e);
    }
    try {
      int maxLen = b.getInt();
      if (maxLen <= 0 || maxLen > 1024) {
        throw new ModelFormatException(
            name, "not a llama2.c tokenizer (max token length " + maxLen + ")");
      }
      String[] pieces = new String[vocabSize];
      float[] scores = new float[vocabSize];
      for (int i = 0; i < vocabSize; i++) {
        scores[i] = b.getFloat();
        int len = b.getInt();
        if (len < 0 || len > maxLen) {
          throw new ModelFormatException(
              name, "token " + i + " has length " + len + " (max " + maxLen + ")");
        }
        byte[] bytes = new byte[len];
        b.get(bytes);
        pieces[i] = new String(bytes, StandardCharsets.UTF_8);
      }
      // llama2.c models end a story by starting the next: run.c stops when BOS is sampled.
      return new SentencePieceTokenizer(pieces, scores, null, 1, 2, true, true, new int[] {1, 2});
    } catch (java.nio.BufferUnderflowException e) {
      throw new ModelFormatException(name, "truncated: fewer than " + vocabSize + " tokens", e);
    }
  }
}
