package io.flinfer.runtime.grammar;

/**
 * A cap on a reasoning model's thought (vLLM's {@code thinking_token_budget}): once the thought has
 * that many tokens and is still open, the next tokens are forced to close it, as the templates
 * write a closed thought ({@code "\n</think>\n\n"}), and the answer follows freely. Its state is
 * derived from the tokens alone, so a request restored from a checkpoint rebuilds it by advancing
 * over the tokens it had.
 *
 * <p>A thought's tokens are those after the one that opened it ({@code <think>}, after any
 * whitespace, or from the first where the prompt opened it) up to the one that closes it. With a
 * budget of 0, an opened thought is closed at once.
 */
public final class ThoughtBudget {
  private static final byte[] OPEN = ThinkingPrefix.OPEN;
  private static final byte[] CLOSE = ThinkingPrefix.CLOSE;

  private static final int OPENING = 0; // OPEN's first `matched` bytes so far
  private static final int THOUGHT = 1; // CLOSE's first `matched` bytes end the text so far
  private static final int ANSWER = 2;

  private final JsonVocabulary vocabulary;
  private final int budget;
  private final int[] close;
  private int phase;
  private int matched;
  private int thoughtTokens;
  private int closing = -1; // the next token of `close` to force; -1: none forced

  /**
   * @param vocabulary the tokens' bytes
   * @param thinking {@link Thinking#MAY_OPEN} or {@link Thinking#OPENED}
   * @param budget the most tokens a thought may have, at least 0
   * @param close the tokens that close a thought (the model's encoding of {@code "\n</think>\n\n"},
   *     special tokens parsed)
   */
  public ThoughtBudget(JsonVocabulary vocabulary, Thinking thinking, int budget, int[] close) {
    if (thinking == Thinking.NONE) {
      throw new IllegalArgumentException("an output without a thought has nothing to cap");
    }
    if (budget < 0 || close.length == 0) {
      throw new IllegalArgumentException("a budget of at least 0 tokens, and tokens to close with");
    }
    this.vocabulary = vocabulary;
    this.budget = budget;
    this.close = close.clone();
    this.phase = thinking == Thinking.OPENED ? THOUGHT : OPENING;
  }

  /** A budget in this one's state, to try tokens ahead (a draft's) without moving this one. */
  public ThoughtBudget fork() {
    ThoughtBudget b = new ThoughtBudget(vocabulary, Thinking.OPENED, budget, close);
    b.copyFrom(this);
    return b;
  }

  /** Takes the state of {@code other}, this one's fork or its origin. */
  public void copyFrom(ThoughtBudget other) {
    phase = other.phase;
    matched = other.matched;
    thoughtTokens = other.thoughtTokens;
    closing = other.closing;
  }

  /** The token that must come next, or -1 when the model chooses freely. */
  public int forced() {
    if (closing < 0 && phase == THOUGHT && thoughtTokens >= budget) {
      closing = 0;
    }
    return closing >= 0 ? close[closing] : -1;
  }

  /** Moves past {@code token}, the output's next token. */
  public void advance(int token) {
    // Where the budget is spent, the token is the forced one (a rebuilt state learns it here).
    if (forced() == token) {
      if (++closing == close.length) {
        closing = -1;
        phase = ANSWER; // whatever the bytes said: the thought is closed
        return;
      }
    }
    if (phase == THOUGHT) {
      thoughtTokens++;
    }
    byte[] bytes = vocabulary.bytes(token);
    for (int i = 0; i < bytes.length && phase != ANSWER; i++) {
      accept(bytes[i]);
    }
  }

  /** How many of the output's tokens so far were the thought's. */
  public int thoughtTokens() {
    return thoughtTokens;
  }

  private void accept(byte value) {
    if (phase == OPENING) {
      if (matched == 0 && isBlank(value)) {
        return; // as the reasoning parser, whitespace may come before the thought
      }
      if (value == OPEN[matched]) {
        if (++matched == OPEN.length) {
          phase = THOUGHT;
          matched = 0;
        }
      } else {
        phase = ANSWER; // the output did not open a thought
      }
      return;
    }
    matched = ThinkingPrefix.closing(matched, value);
    if (matched == CLOSE.length) {
      phase = ANSWER;
    }
  }

  private static boolean isBlank(byte b) {
    return b == ' ' || b == '\n' || b == '\t' || b == '\r' || b == 0x0b || b == '\f';
  }
}
