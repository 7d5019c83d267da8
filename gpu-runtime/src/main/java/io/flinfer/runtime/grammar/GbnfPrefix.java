package io.flinfer.runtime.grammar;

import java.util.Arrays;

/**
 * Reads UTF-8 bytes and says whether they are still the start of an output that a {@link
 * GbnfGrammar} derives: the set of stacks ({@link GbnfStacks}) that the characters so far leave,
 * each about to read a character set (or {@link GbnfStacks#DONE}), and the character being read. A
 * byte inside a character is taken where some stack can read a character it may become. A call that
 * a rule makes last returns straight to the caller's caller, so a repetition does not deepen the
 * stacks.
 */
final class GbnfPrefix extends OutputState {
  /** The most stacks one state may hold: an output that needs more is not taken. */
  static final int MAX_TOPS = 256;

  private final GbnfGrammar g;
  private final GbnfStacks stacks;
  private int[] tops = new int[MAX_TOPS];
  private int count;
  private int[] next = new int[MAX_TOPS];
  private int nextCount;
  private final Utf8Reader text = new Utf8Reader();

  GbnfPrefix(GbnfGrammar g, GbnfStacks stacks) {
    this.g = g;
    this.stacks = stacks;
    for (int p : g.alternatives[g.root]) {
      closure(p, GbnfStacks.BOTTOM);
    }
    swap();
  }

  /**
   * Adds to {@code next} the stacks that reading from {@code pos} over {@code under} starts: each
   * call entered, each end returned from, down to a character set or to the end of the root.
   */
  private void closure(int pos, int under) {
    switch (g.kind[pos]) {
      case GbnfGrammar.END -> {
        if (under == GbnfStacks.BOTTOM) {
          add(GbnfStacks.DONE);
        } else {
          closure(stacks.position(under), stacks.below(under));
        }
      }
      case GbnfGrammar.CHARS -> {
        int s = stacks.of(pos, under);
        if (s >= 0) { // else too deep: not taken
          add(s);
        }
      }
      default -> {
        // A last call returns straight to this rule's caller.
        int back = g.kind[pos + 1] == GbnfGrammar.END ? under : stacks.of(pos + 1, under);
        if (back != -1 || g.kind[pos + 1] == GbnfGrammar.END) {
          for (int p : g.alternatives[g.arg[pos]]) {
            closure(p, back);
          }
        }
      }
    }
  }

  /** Adds {@code stack} to the next set, once; past {@link #MAX_TOPS} it is not taken. */
  private void add(int stack) {
    for (int k = 0; k < nextCount; k++) {
      if (next[k] == stack) {
        return;
      }
    }
    if (nextCount < MAX_TOPS) {
      next[nextCount++] = stack;
    }
  }

  private void swap() {
    int[] t = tops;
    tops = next;
    next = t;
    count = nextCount;
    nextCount = 0;
  }

  @Override
  public boolean accept(byte value) {
    int c = text.feed(value & 0xff);
    if (c >= 0) {
      return step(c);
    }
    if (c == Utf8Reader.REJECT) {
      return false;
    }
    long range = text.completions();
    int lo = (int) (range >>> 32);
    int hi = (int) range;
    for (int k = 0; k < count; k++) {
      if (tops[k] != GbnfStacks.DONE && CodePointRanges.intersects(set(tops[k]), lo, hi)) {
        return true;
      }
    }
    return false;
  }

  private int[] set(int stack) {
    return g.sets[g.arg[stacks.position(stack)]];
  }

  /** Reads code point {@code cp}: the stacks that take it, moved on. */
  private boolean step(int cp) {
    nextCount = 0;
    for (int k = 0; k < count; k++) {
      int t = tops[k];
      if (t != GbnfStacks.DONE && CodePointRanges.intersects(set(t), cp, cp)) {
        closure(stacks.position(t) + 1, stacks.below(t));
      }
    }
    if (nextCount == 0) {
      return false;
    }
    swap();
    return true;
  }

  @Override
  public boolean isComplete() {
    return mayEnd() && count == 1;
  }

  @Override
  public boolean mayEnd() {
    if (!text.atBoundary()) {
      return false;
    }
    for (int k = 0; k < count; k++) {
      if (tops[k] == GbnfStacks.DONE) {
        return true;
      }
    }
    return false;
  }

  /** Between characters, the set of stacks decides what follows (made once, sorted). */
  @Override
  int maskKey() {
    if (!text.atBoundary()) {
      return -1;
    }
    Arrays.sort(tops, 0, count); // a set: its order means nothing
    return stacks.setOf(tops, count);
  }

  @Override
  int plainRoom() {
    return -1;
  }

  @Override
  public void copyFrom(OutputState other) {
    GbnfPrefix o = (GbnfPrefix) other;
    System.arraycopy(o.tops, 0, tops, 0, o.count);
    count = o.count;
    text.copyFrom(o.text);
  }

  @Override
  public GbnfPrefix fresh() {
    return new GbnfPrefix(g, stacks);
  }
}
