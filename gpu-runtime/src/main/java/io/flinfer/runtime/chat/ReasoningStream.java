package io.flinfer.runtime.chat;

import static io.flinfer.runtime.chat.ReasoningParser.CLOSE;
import static io.flinfer.runtime.chat.ReasoningParser.OPEN;

import io.flinfer.runtime.chat.ReasoningParser.Split;

/**
 * One output split into thinking and answer as its text arrives. What may still turn out to be a
 * tag, or newlines that end the thinking or start the answer, is held until the text after it
 * decides; everything else goes out at once. Not thread-safe.
 */
public final class ReasoningStream {
  private enum Phase {
    /** Nothing but whitespace yet: the output may still open with {@code <think>}. */
    START,
    THINKING,
    /** After {@code </think>}: newlines at the answer's start are dropped. */
    AFTER,
    ANSWER
  }

  private final StringBuilder held = new StringBuilder();
  private Phase phase;
  private boolean thoughtStarted; // in THINKING: text other than newlines has gone out
  private boolean thought; // the output has thinking (its reasoning is not null)

  ReasoningStream(boolean startsInside) {
    phase = startsInside ? Phase.THINKING : Phase.START;
    thought = startsInside;
  }

  /** What of the output so far, with {@code delta} after it, may go out now. */
  public Split next(String delta) {
    held.append(delta);
    StringBuilder reasoning = new StringBuilder();
    StringBuilder content = new StringBuilder();
    boolean progress = true;
    while (progress) {
      progress =
          switch (phase) {
            case START -> start(content);
            case THINKING -> thinking(reasoning, false);
            case AFTER -> after();
            case ANSWER -> answer(content);
          };
    }
    return split(reasoning, content);
  }

  /** The rest of the output, which has ended. */
  public Split finish() {
    StringBuilder reasoning = new StringBuilder();
    StringBuilder content = new StringBuilder();
    switch (phase) {
      case START, ANSWER -> content.append(held);
      case THINKING -> thinking(reasoning, true);
      case AFTER -> {} // only newlines are held
    }
    held.setLength(0);
    phase = Phase.ANSWER;
    return split(reasoning, content);
  }

  private Split split(StringBuilder reasoning, StringBuilder content) {
    return new Split(thought ? reasoning.toString() : null, content.toString());
  }

  private boolean start(StringBuilder content) {
    int i = 0;
    while (i < held.length() && Character.isWhitespace(held.charAt(i))) {
      i++;
    }
    String rest = held.substring(i);
    if (rest.startsWith(OPEN)) {
      held.delete(0, i + OPEN.length());
      phase = Phase.THINKING;
      thought = true;
      return true;
    }
    if (OPEN.startsWith(rest)) {
      return false; // maybe the tag, still arriving
    }
    phase = Phase.ANSWER;
    return true;
  }

  /** Sends the thinking that is surely thinking; at the end, all of it but trailing newlines. */
  private boolean thinking(StringBuilder reasoning, boolean end) {
    if (!thoughtStarted) {
      if (!dropLeadingNewlines()) {
        return false;
      }
      thoughtStarted = true;
    }
    int close = held.indexOf(CLOSE);
    int upTo;
    if (close >= 0) {
      upTo = trimNewlines(close);
    } else if (end) {
      upTo = trimNewlines(held.length());
    } else {
      upTo = trimNewlines(held.length() - partialClose());
    }
    reasoning.append(held, 0, upTo);
    if (close >= 0) {
      held.delete(0, close + CLOSE.length());
      phase = Phase.AFTER;
      return true;
    }
    held.delete(0, upTo);
    return false;
  }

  /** The length of the longest end of the held text that begins {@code </think>}. */
  private int partialClose() {
    for (int k = Math.min(CLOSE.length() - 1, held.length()); k > 0; k--) {
      if (CLOSE.startsWith(held.substring(held.length() - k))) {
        return k;
      }
    }
    return 0;
  }

  /** {@code end} less the newlines just before it. */
  private int trimNewlines(int end) {
    while (end > 0 && held.charAt(end - 1) == '\n') {
      end--;
    }
    return end;
  }

  private boolean after() {
    if (!dropLeadingNewlines()) {
      return false;
    }
    phase = Phase.ANSWER;
    return true;
  }

  /** Drops the newlines the held text starts with; whether any other text is held. */
  private boolean dropLeadingNewlines() {
    int i = 0;
    while (i < held.length() && held.charAt(i) == '\n') {
      i++;
    }
    held.delete(0, i);
    return held.length() > 0;
  }

  private boolean answer(StringBuilder content) {
    content.append(held);
    held.setLength(0);
    return false;
  }
}
