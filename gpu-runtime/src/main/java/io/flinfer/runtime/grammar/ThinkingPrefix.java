package io.flinfer.runtime.grammar;

/**
 * The start of an output that may think before it takes a shape: {@code <think>} (unless the prompt
 * opened the thought), any bytes that do not close it, {@code </think>}, up to {@link #MAX_BLANKS}
 * newlines or spaces, then an output of the inner shape. A thought may be as long as the token
 * limit allows; the inner shape's limits hold after it.
 */
public final class ThinkingPrefix extends OutputState {
  static final byte[] OPEN = {'<', 't', 'h', 'i', 'n', 'k', '>'};
  static final byte[] CLOSE = {'<', '/', 't', 'h', 'i', 'n', 'k', '>'};

  /** Newlines and spaces between the thought and the shape, as templates write them. */
  public static final int MAX_BLANKS = 4;

  private static final int OPENING = 0; // OPEN's first `matched` bytes so far, or the shape
  private static final int THOUGHT = 1; // CLOSE's first `matched` bytes end the text so far
  private static final int BLANKS = 2;
  private static final int SHAPE = 3;

  private final OutputState inner;
  private final boolean opened;
  private int phase;
  private int matched;
  private int blanks;

  /**
   * @param inner the shape after the thought, before any byte
   * @param thinking {@link Thinking#MAY_OPEN} or {@link Thinking#OPENED}
   */
  public ThinkingPrefix(OutputState inner, Thinking thinking) {
    if (thinking == Thinking.NONE) {
      throw new IllegalArgumentException("an output without a thought is its shape alone");
    }
    this.inner = inner;
    this.opened = thinking == Thinking.OPENED;
    this.phase = opened ? THOUGHT : OPENING;
  }

  @Override
  public boolean accept(byte value) {
    switch (phase) {
      case OPENING:
        if (value == OPEN[matched]) {
          if (++matched == OPEN.length) {
            phase = THOUGHT;
            matched = 0;
          }
          return true;
        }
        // Not a thought after all: the bytes taken as its opening start the shape.
        phase = SHAPE;
        return inner.accept(OPEN, 0, matched) && inner.accept(value);
      case THOUGHT:
        matched = closing(matched, value);
        if (matched == CLOSE.length) {
          phase = BLANKS;
        }
        return true;
      case BLANKS:
        if ((value == '\n' || value == ' ') && blanks < MAX_BLANKS) {
          blanks++;
          return true;
        }
        phase = SHAPE;
        return inner.accept(value);
      default:
        return inner.accept(value);
    }
  }

  /**
   * Inside a thought whose text ends with {@code CLOSE}'s first {@code matched} bytes: how many end
   * it after {@code value} ({@code CLOSE.length}: the thought is closed).
   */
  static int closing(int matched, byte value) {
    // No proper prefix of CLOSE ends with its own start, so a mismatch restarts at '<'.
    if (value == CLOSE[matched]) {
      return matched + 1;
    }
    return value == CLOSE[0] ? 1 : 0;
  }

  @Override
  public boolean isComplete() {
    return phase == SHAPE && inner.isComplete();
  }

  /** After the thought (or before any byte, where the output need not think), as the shape says. */
  @Override
  public boolean mayEnd() {
    boolean shapeAhead = phase == SHAPE || phase == BLANKS || phase == OPENING && matched == 0;
    return shapeAhead && inner.mayEnd();
  }

  @Override
  int maskKey() {
    return phase == SHAPE ? inner.maskKey() : -1;
  }

  @Override
  int plainRoom() {
    return phase == SHAPE ? inner.plainRoom() : -1;
  }

  @Override
  StringPattern plainPattern() {
    return phase == SHAPE ? inner.plainPattern() : null;
  }

  @Override
  StringPattern textPattern() {
    return phase == SHAPE ? inner.textPattern() : null;
  }

  @Override
  int patternRoom() {
    return inner.patternRoom();
  }

  @Override
  int patternState() {
    return inner.patternState();
  }

  /** Inside the thought, every token without {@code '>'} may follow: only it closes the thought. */
  @Override
  boolean inFreeText() {
    return phase == THOUGHT;
  }

  @Override
  public void copyFrom(OutputState other) {
    ThinkingPrefix o = (ThinkingPrefix) other;
    inner.copyFrom(o.inner);
    phase = o.phase;
    matched = o.matched;
    blanks = o.blanks;
  }

  @Override
  public ThinkingPrefix fresh() {
    return new ThinkingPrefix(inner.fresh(), opened ? Thinking.OPENED : Thinking.MAY_OPEN);
  }
}
