package io.flinfer.operators.engine;

import io.flinfer.runtime.grammar.JsonConstraint;
import io.flinfer.runtime.grammar.JsonVocabulary;
import io.flinfer.runtime.grammar.OutputState;
import io.flinfer.runtime.sampling.SamplingParams;
import io.flinfer.runtime.tokenizer.Tokenizer;

/**
 * What the engine keeps for requests held to a response format: the vocabulary's table, built at
 * the first such request (a large vocabulary takes a moment), and one mask that each such request
 * fills in turn right before its token is chosen.
 */
final class OutputFormats {
  private final Tokenizer tokenizer;
  private JsonVocabulary json;
  private long[] mask;

  OutputFormats(Tokenizer tokenizer) {
    this.tokenizer = tokenizer;
  }

  /** A new constraint for a request sampled with {@code p}, or null for free text. */
  JsonConstraint constraint(SamplingParams p) {
    OutputState shape = p.outputShape();
    if (shape == null) {
      return null;
    }
    if (json == null) {
      json = JsonVocabulary.of(tokenizer);
      mask = new long[JsonVocabulary.words(json.size())];
    }
    return new JsonConstraint(json, shape);
  }

  /** The shared mask, filled by {@link JsonConstraint#allowed}. */
  long[] mask() {
    return mask;
  }
}
