package io.flinfer.runtime.grammar;

/**
 * One request's output held to a shape (one JSON object, one that a schema describes, or a match of
 * a regular expression): which tokens may come next ({@link #allowed}), and the state after each
 * token chosen ({@link #advance}). Its state is derived from the tokens alone, so a request
 * restored from a checkpoint rebuilds it by advancing over the tokens it had.
 */
public final class OutputConstraint {
  private final JsonVocabulary vocabulary;
  private final OutputState state;
  private final OutputState probe;
  private final MaskCache cache;
  private final PatternRuns runs;
  // A state for each depth of the vocabulary's trie, made at the first mask this one computes.
  private OutputState[] stack;

  /** Any one JSON object ({@link JsonPrefix}). */
  public OutputConstraint(JsonVocabulary vocabulary) {
    this(vocabulary, new JsonPrefix());
  }

  /** An output of {@code shape}'s kind, from its start. */
  public OutputConstraint(JsonVocabulary vocabulary, OutputState shape) {
    this(vocabulary, shape, new MaskCache(), new PatternRuns());
  }

  private OutputConstraint(
      JsonVocabulary vocabulary, OutputState shape, MaskCache cache, PatternRuns runs) {
    this.vocabulary = vocabulary;
    this.cache = cache;
    this.runs = runs;
    this.state = shape.fresh();
    this.probe = shape.fresh();
  }

  /**
   * Sets in {@code mask} ({@link JsonVocabulary#words} words; bit {@code t % 64} of word {@code t /
   * 64} for token t) exactly the tokens that may come next, clearing the rest. Returns how many.
   */
  public int allowed(long[] mask) {
    int key = state.maskKey();
    int n = key >= 0 ? cache.get(key, mask) : -1;
    if (n < 0) {
      if (stack == null) {
        stack = new OutputState[TokenTrie.DEPTH + 1];
        for (int d = 0; d < stack.length; d++) {
          stack[d] = state.fresh();
        }
      }
      n = vocabulary.allowed(state, mask, stack, probe, runs);
      if (key >= 0) {
        cache.put(key, mask, n);
      }
    }
    return n;
  }

  /**
   * Moves past {@code token}. Returns false, leaving the state as it was, when the token cannot
   * follow the text so far.
   */
  public boolean advance(int token) {
    byte[] b = vocabulary.bytes(token);
    probe.copyFrom(state);
    if (b.length == 0 || !probe.accept(b, 0, b.length)) {
      return false;
    }
    state.copyFrom(probe);
    return true;
  }

  /**
   * A constraint of the same shape in this one's state, to try tokens ahead (a draft's) without
   * moving this one.
   */
  public OutputConstraint fork() {
    OutputConstraint c = new OutputConstraint(vocabulary, state, cache, runs);
    c.state.copyFrom(state);
    return c;
  }

  /** Takes the state of {@code other}, this one's fork or its origin. */
  public void copyFrom(OutputConstraint other) {
    state.copyFrom(other.state);
  }

  /** The state after the tokens so far. For tests. */
  OutputState state() {
    return state;
  }

  /** Whether the output is complete (a JSON value closed): the request's output is done. */
  public boolean isComplete() {
    return state.isComplete();
  }

  /** Whether the output may end here, more being allowed too ({@link OutputState#mayEnd}). */
  public boolean mayEnd() {
    return state.mayEnd();
  }
}
