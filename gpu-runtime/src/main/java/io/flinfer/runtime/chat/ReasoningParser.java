package io.flinfer.runtime.chat;

import io.flinfer.runtime.grammar.Thinking;
import java.util.List;
import java.util.Optional;

/**
 * Tells a reasoning model's thinking from its answer, as vLLM's and SGLang's reasoning parsers do
 * for Qwen3, QwQ and DeepSeek-R1: the thinking is what stands between {@code <think>} and {@code
 * </think>} (or, where the prompt itself opened {@code <think>}, everything before {@code
 * </think>}), without the newlines at its ends; the answer is what follows, without the newlines at
 * its start, as the families' templates write them back into a conversation. An output that neither
 * starts with {@code <think>} nor follows an opened one is all answer; one cut short while thinking
 * is all thinking. Whole texts and streams split alike.
 */
public final class ReasoningParser {
  static final String OPEN = "<think>";
  static final String CLOSE = "</think>";

  private final Thinking thinking;

  private ReasoningParser(Thinking thinking) {
    this.thinking = thinking;
  }

  /**
   * The parser for requests rendered by {@code template} with the switches {@code kwargsJson}
   * (null: none), or empty when the template does not write thinking back ({@code </think>} is not
   * in it). Whether the prompt opens the thinking is read from the template's rendering of a
   * one-turn conversation with those switches: DeepSeek-R1's opens it, Qwen3's leaves it to the
   * model, and Qwen3's with {@code enable_thinking} false closes an empty one.
   */
  public static Optional<ReasoningParser> forTemplate(ChatTemplate template, String kwargsJson) {
    if (!template.source().contains(CLOSE)) {
      return Optional.empty();
    }
    Thinking thinking;
    try {
      String prompt =
          template.render(List.of(new ChatMessage("user", "?")), null, kwargsJson, true);
      int open = prompt.lastIndexOf(OPEN);
      int close = prompt.lastIndexOf(CLOSE);
      if (open > close) {
        thinking = Thinking.OPENED;
      } else if (close >= 0 && prompt.substring(close + CLOSE.length()).isBlank()) {
        thinking = Thinking.NONE; // the prompt closed the thought: the model answers at once
      } else {
        thinking = Thinking.MAY_OPEN;
      }
    } catch (ChatTemplateException e) {
      thinking = Thinking.MAY_OPEN; // the request itself is refused where its rendering fails
    }
    return Optional.of(new ReasoningParser(thinking));
  }

  /** A parser for outputs that follow a prompt which opened the thinking, or not. */
  public static ReasoningParser of(boolean startsInside) {
    return new ReasoningParser(startsInside ? Thinking.OPENED : Thinking.MAY_OPEN);
  }

  /** Whether the prompt opened the thinking, so that the output starts inside it. */
  public boolean startsInside() {
    return thinking == Thinking.OPENED;
  }

  /**
   * Whether the output may think before its answer: {@link Thinking#NONE} where the prompt closed
   * the thought (Qwen3 with {@code enable_thinking} false), so that a constrained answer holds from
   * the first token.
   */
  public Thinking thinking() {
    return thinking;
  }

  /** A whole output's thinking and answer. */
  public Split split(String output) {
    ReasoningStream s = stream();
    return s.next(output).then(s.finish());
  }

  /**
   * How many characters at the start of {@code output} are its thought, tags included: up to the
   * end of {@code </think>}, all of it when the thought never closed, 0 when there is none.
   */
  public int thoughtLength(String output) {
    int from = 0;
    if (!startsInside()) {
      String rest = output.stripLeading();
      if (!rest.startsWith(OPEN)) {
        return 0;
      }
      from = output.length() - rest.length() + OPEN.length();
    }
    int close = output.indexOf(CLOSE, from);
    return close < 0 ? output.length() : close + CLOSE.length();
  }

  /** A parser of one output that arrives piece by piece. */
  public ReasoningStream stream() {
    return new ReasoningStream(startsInside());
  }

  /**
   * Thinking and answer text (of a whole output, or what of a stream may go out now).
   *
   * @param reasoning the thinking, or null where the output has none
   * @param content the answer ("" for none)
   */
  public record Split(String reasoning, String content) {
    /** This piece followed by {@code next}. */
    public Split then(Split next) {
      String r =
          reasoning == null
              ? next.reasoning
              : next.reasoning == null ? reasoning : reasoning + next.reasoning;
      return new Split(r, content + next.content);
    }
  }
}
