package io.flinfer.operators.detokenize;

import io.flinfer.runtime.tokenizer.TextDecoder;
import io.flinfer.runtime.tokenizer.Tokenizer;
import java.util.List;

/**
 * Turns one request's generated tokens into text deltas. Owns the decoder state (a UTF-8 character
 * split across tokens is held until complete; SentencePiece word boundaries become spaces) and the
 * text held back because it could be the start of a stop string. A stop string ends the text just
 * before it; nothing of it is ever emitted.
 */
public final class IncrementalDetokenizer {
  private final TextDecoder decoder;
  private final List<String> stops;
  private final int hold;
  private final StringBuilder pending = new StringBuilder();
  private final StringBuilder text = new StringBuilder();
  private boolean stopped;

  /**
   * @param lastPromptToken the prompt's last token, so the first piece's spacing is right
   */
  public IncrementalDetokenizer(Tokenizer tokenizer, int lastPromptToken, List<String> stops) {
    this.decoder = new TextDecoder(tokenizer, lastPromptToken);
    this.stops = List.copyOf(stops);
    int longest = 0;
    for (String s : stops) {
      longest = Math.max(longest, s.length());
    }
    this.hold = Math.max(0, longest - 1);
  }

  /** The text that became final with {@code token}; empty while held back or after a stop. */
  public String next(int token) {
    if (stopped) {
      return "";
    }
    pending.append(decoder.next(token));
    int cut = firstStop();
    if (cut >= 0) {
      stopped = true;
      return emit(cut);
    }
    return emit(Math.max(0, pending.length() - hold));
  }

  /** Everything still held, at the end of the request. */
  public String finish() {
    if (stopped) {
      return "";
    }
    pending.append(decoder.flush());
    int cut = firstStop();
    stopped = cut >= 0;
    return emit(cut >= 0 ? cut : pending.length());
  }

  /** Whether a stop string has ended the text. */
  public boolean stopped() {
    return stopped;
  }

  /** All text emitted so far. */
  public String text() {
    return text.toString();
  }

  private int firstStop() {
    int first = -1;
    for (String s : stops) {
      int at = pending.indexOf(s);
      if (at >= 0 && (first < 0 || at < first)) {
        first = at;
      }
    }
    return first;
  }

  private String emit(int upTo) {
    // Never split a surrogate pair between two deltas.
    if (upTo > 0
        && upTo < pending.length()
        && Character.isHighSurrogate(pending.charAt(upTo - 1))) {
      upTo--;
    }
    String out = pending.substring(0, upTo);
    pending.delete(0, upTo);
    if (stopped) {
      pending.setLength(0);
    }
    text.append(out);
    return out;
  }
}
