package io.flinfer.runtime.tokenizer;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/**
 * Turns a stream of token ids into text deltas. Owns the bytes of a UTF-8 character that is split
 * across tokens, holding them until the character is complete.
 */
public final class TextDecoder {
  private final Tokenizer tokenizer;
  private final ByteArrayOutputStream pending = new ByteArrayOutputStream();
  private int previous;

  public TextDecoder(Tokenizer tokenizer) {
    this(tokenizer, -1);
  }

  /** A decoder that continues after token {@code previous} (the last prompt token, say). */
  public TextDecoder(Tokenizer tokenizer, int previous) {
    this.tokenizer = tokenizer;
    this.previous = previous;
  }

  /** The text that became complete with {@code token}; possibly empty. */
  public String next(int token) {
    byte[] piece = tokenizer.pieceBytes(previous, token);
    previous = token;
    pending.write(piece, 0, piece.length);
    byte[] buf = pending.toByteArray();
    int complete = completePrefix(buf);
    if (complete == 0) {
      return "";
    }
    pending.reset();
    pending.write(buf, complete, buf.length - complete);
    return new String(buf, 0, complete, StandardCharsets.UTF_8);
  }

  /** Whatever is left, invalid bytes replaced by U+FFFD. */
  public String flush() {
    String s = pending.toString(StandardCharsets.UTF_8);
    pending.reset();
    return s;
  }

  /** Length of the longest prefix that does not end inside a UTF-8 character. */
  static int completePrefix(byte[] b) {
    int n = b.length;
    // Look back at most 3 bytes for the lead byte of the last character.
    for (int back = 1; back <= Math.min(4, n); back++) {
      int c = b[n - back] & 0xff;
      if ((c & 0xc0) == 0x80) {
        continue; // continuation byte
      }
      int need = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
      return need > back ? n - back : n;
    }
    return n;
  }
}
