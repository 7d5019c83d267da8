package io.flinfer.runtime.chat;

import io.flinfer.runtime.grammar.Thinking;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The {@link ReasoningParser} of a model's chat template for each set of template switches, each
 * made once (one rendering of the template) and kept; few distinct switches are expected, so the
 * kept ones are dropped when there are many. Thread-safe.
 */
public final class ReasoningParsers {
  private static final int KEPT = 64;

  private final ChatTemplate template;
  private final Map<String, Optional<ReasoningParser>> parsers = new HashMap<>();

  /**
   * @param template the model's chat template, or null where it has none (no output has thinking)
   */
  public ReasoningParsers(ChatTemplate template) {
    this.template = template;
  }

  /**
   * The parser for a conversation rendered with {@code kwargsJson} (null: none), or empty when the
   * model's template does not write thinking.
   */
  public synchronized Optional<ReasoningParser> forKwargs(String kwargsJson) {
    if (template == null) {
      return Optional.empty();
    }
    if (parsers.size() >= KEPT) {
      parsers.clear();
    }
    return parsers.computeIfAbsent(
        kwargsJson == null ? "" : kwargsJson,
        k -> ReasoningParser.forTemplate(template, kwargsJson));
  }

  /**
   * Whether a conversation rendered with {@code kwargsJson} may think before its answer ({@link
   * Thinking#NONE} where the template writes no thinking).
   */
  public Thinking thinking(String kwargsJson) {
    return forKwargs(kwargsJson).map(ReasoningParser::thinking).orElse(Thinking.NONE);
  }
}
