package io.flinfer.runtime.grammar;

import java.util.List;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * An output that a regular expression matches as a whole (SGLang's {@code regex}, vLLM's {@code
 * guided_regex}), as the automaton of a JSON Schema's {@code pattern} ({@link StringPattern}):
 * ECMA-262 syntax, anchored at both ends whether or not it says so, at most {@link
 * StringPattern#MAX_STATES} states. Compiled once per request; the automaton is kept for the next
 * request with the same expression. Immutable.
 */
public final class RegexGrammar {
  /** Characters that stand for something else in an expression, escaped in {@link #ofChoices}. */
  private static final String SPECIAL = "\\^$.|?*+()[]{}/";

  private final StringPattern pattern;

  private RegexGrammar(StringPattern pattern) {
    this.pattern = pattern;
  }

  /**
   * The outputs {@code regex} matches from their first character to their last.
   *
   * @throws IllegalArgumentException naming what is not supported, or a regex no output matches
   */
  public static RegexGrammar compile(String regex) {
    try {
      Pattern.compile(regex); // its syntax: unbalanced groups would change its meaning below
    } catch (PatternSyntaxException e) {
      throw new IllegalArgumentException(
          "regex " + regex + " is not a regular expression: " + e.getDescription(), e);
    }
    String body = regex;
    if (body.startsWith("^")) {
      body = body.substring(1);
    }
    if (body.endsWith("$") && !escaped(body, body.length() - 1)) {
      body = body.substring(0, body.length() - 1);
    }
    String anchored = "^(?:" + body + ")$";
    try {
      return new RegexGrammar(
          StringPattern.of(List.of(StringPattern.Part.of(anchored, null, 0, Integer.MAX_VALUE))));
    } catch (IllegalArgumentException e) {
      // The pattern's own messages name the anchored form: name the regex as given.
      String why = e.getMessage().replace("pattern " + anchored, "");
      throw new IllegalArgumentException(
          "regex " + regex + (why.startsWith(": ") || why.startsWith(" ") ? why : ": " + why), e);
    }
  }

  /** Whether the character at {@code i} follows an odd number of backslashes. */
  private static boolean escaped(String s, int i) {
    int slashes = 0;
    while (i - slashes - 1 >= 0 && s.charAt(i - slashes - 1) == '\\') {
      slashes++;
    }
    return slashes % 2 == 1;
  }

  /**
   * A regular expression whose matches are exactly {@code choices} (vLLM's {@code guided_choice}):
   * the texts, each character that an expression reads otherwise escaped, as alternatives.
   *
   * @throws IllegalArgumentException where there are none
   */
  public static String ofChoices(List<String> choices) {
    if (choices.isEmpty()) {
      throw new IllegalArgumentException("a choice needs at least one text");
    }
    StringBuilder regex = new StringBuilder();
    for (int k = 0; k < choices.size(); k++) {
      String choice = choices.get(k);
      regex.append(k == 0 ? "" : "|");
      for (int i = 0; i < choice.length(); i++) {
        char c = choice.charAt(i);
        if (SPECIAL.indexOf(c) >= 0) {
          regex.append('\\');
        }
        regex.append(c);
      }
    }
    return regex.toString();
  }

  /** The state before the output's first byte. */
  public OutputState start() {
    return new RegexPrefix(pattern);
  }
}
