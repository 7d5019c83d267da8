package io.flinfer.runtime.grammar;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads a grammar in llama.cpp's GBNF (which SGLang's and vLLM's EBNF grammars also take): rules
 * {@code name ::= alternatives}, a rule ending at its line's end unless a group is open or the line
 * ends in {@code ::=} or {@code |}, sequences of string literals, character classes ({@code [a-z]},
 * {@code [^"\\]}), {@code .}, rule names and groups, each with {@code *}, {@code +}, {@code ?} or
 * {@code {m}}, {@code {m,}}, {@code {m,n}}; {@code #} comments. Escapes: {@code \n \r \t \\ \" \[
 * \] \- \xHH \\uHHHH \UHHHHHHHH}. Gives each rule's alternatives as {@link Node} trees, repetitions
 * still as such.
 */
final class GbnfParser {
  /** A piece of a rule: what it matches. */
  sealed interface Node permits Chars, Ref, Seq, Alt, Repeat {}

  /** One character of the given code point ranges ({@code [lo, hi]} pairs, sorted, disjoint). */
  record Chars(int[] ranges) implements Node {}

  /** The rule of that name. */
  record Ref(String name) implements Node {}

  /** The pieces one after another. */
  record Seq(List<Node> items) implements Node {}

  /** Any one of the pieces. */
  record Alt(List<Node> options) implements Node {}

  /** The piece {@code min} to {@code max} times ({@code max} -1: no bound). */
  record Repeat(Node item, int min, int max) implements Node {}

  /** The most a counted repetition may ask for, so that its expansion stays small. */
  static final int MAX_COUNT = 1_000;

  private final String text;
  private int at;

  private GbnfParser(String text) {
    this.text = text;
  }

  /**
   * The rules of {@code grammar}, by name, in their order.
   *
   * @throws IllegalArgumentException naming the line and what is wrong there
   */
  static Map<String, Node> parse(String grammar) {
    return new GbnfParser(grammar).rules();
  }

  private Map<String, Node> rules() {
    Map<String, Node> rules = new LinkedHashMap<>();
    skip(true);
    while (at < text.length()) {
      String name = name();
      if (name.isEmpty()) {
        throw error("a rule's name expected");
      }
      skip(false);
      if (!text.startsWith("::=", at)) {
        throw error("::= expected after " + name);
      }
      at += 3;
      skip(true); // a rule's body may start on the next line
      if (rules.put(name, alternatives(false)) != null) {
        throw error("rule " + name + " is defined twice");
      }
      skip(true);
    }
    return rules;
  }

  /** Alternatives up to the line's end (or, {@code nested}, up to the group's close). */
  private Node alternatives(boolean nested) {
    List<Node> options = new ArrayList<>();
    options.add(sequence(nested));
    while (at < text.length() && text.charAt(at) == '|') {
      at++;
      skip(true); // the next alternative may start on the next line

      options.add(sequence(nested));
    }
    return options.size() == 1 ? options.get(0) : new Alt(options);
  }

  private Node sequence(boolean nested) {
    List<Node> items = new ArrayList<>();
    while (at < text.length()) {
      char c = text.charAt(at);
      if (c == '|' || c == ')' || (!nested && (c == '\n' || c == '\r'))) {
        break;
      }
      Node item;
      if (c == '"') {
        at++;
        item = literal();
      } else if (c == '[') {
        at++;
        item = charClass();
      } else if (c == '.') {
        at++;
        item = new Chars(new int[] {0, Character.MAX_CODE_POINT});
      } else if (c == '(') {
        at++;
        skip(true);
        item = alternatives(true);
        if (at >= text.length() || text.charAt(at) != ')') {
          throw error(") expected");
        }
        at++;
      } else {
        String name = name();
        if (name.isEmpty()) {
          throw error("unexpected " + (c == '\n' ? "line end" : "'" + c + "'"));
        }
        item = new Ref(name);
      }
      items.add(quantified(item));
      skip(nested);
    }
    return items.size() == 1 ? items.get(0) : new Seq(items);
  }

  private Node quantified(Node item) {
    if (at >= text.length()) {
      return item;
    }
    switch (text.charAt(at)) {
      case '*':
        at++;
        return new Repeat(item, 0, -1);
      case '+':
        at++;
        return new Repeat(item, 1, -1);
      case '?':
        at++;
        return new Repeat(item, 0, 1);
      case '{':
        at++;
        int min = number();
        int max = min;
        if (at < text.length() && text.charAt(at) == ',') {
          at++;
          max = at < text.length() && Character.isDigit(text.charAt(at)) ? number() : -1;
        }
        if (at >= text.length() || text.charAt(at) != '}') {
          throw error("} expected");
        }
        at++;
        if (max != -1 && max < min) {
          throw error("{" + min + "," + max + "} counts down");
        }
        return new Repeat(item, min, max);
      default:
        return item;
    }
  }

  private int number() {
    int start = at;
    while (at < text.length() && Character.isDigit(text.charAt(at))) {
      at++;
    }
    if (at == start || at - start > 4 || Integer.parseInt(text.substring(start, at)) > MAX_COUNT) {
      throw error("a count from 0 to " + MAX_COUNT + " expected");
    }
    return Integer.parseInt(text.substring(start, at));
  }

  private Node literal() {
    List<Node> chars = new ArrayList<>();
    while (true) {
      if (at >= text.length()) {
        throw error("unterminated string");
      }
      char c = text.charAt(at);
      if (c == '"') {
        at++;
        break;
      }
      int cp = c == '\\' ? escape() : text.codePointAt(at);
      if (c != '\\') {
        at += Character.charCount(cp);
      }
      chars.add(new Chars(new int[] {cp, cp}));
    }
    return chars.size() == 1 ? chars.get(0) : new Seq(chars);
  }

  private Node charClass() {
    boolean negated = at < text.length() && text.charAt(at) == '^';
    if (negated) {
      at++;
    }
    List<int[]> ranges = new ArrayList<>();
    while (true) {
      if (at >= text.length()) {
        throw error("unterminated character class");
      }
      if (text.charAt(at) == ']') {
        at++;
        break;
      }
      int lo = classChar();
      int hi = lo;
      if (at + 1 < text.length() && text.charAt(at) == '-' && text.charAt(at + 1) != ']') {
        at++;
        hi = classChar();
        if (hi < lo) {
          throw error("the range of a class counts down");
        }
      }
      ranges.add(new int[] {lo, hi});
    }
    int[] merged = CodePointRanges.union(ranges);
    return new Chars(negated ? CodePointRanges.complement(merged) : merged);
  }

  private int classChar() {
    if (text.charAt(at) == '\\') {
      return escape();
    }
    int cp = text.codePointAt(at);
    at += Character.charCount(cp);
    return cp;
  }

  /** The escape at {@code at} (a backslash), read. */
  private int escape() {
    if (at + 1 >= text.length()) {
      throw error("a lone backslash");
    }
    char e = text.charAt(at + 1);
    at += 2;
    return switch (e) {
      case 'n' -> '\n';
      case 'r' -> '\r';
      case 't' -> '\t';
      case '\\', '"', '[', ']', '-', '^' -> e;
      case 'x' -> hex(2);
      case 'u' -> hex(4);
      case 'U' -> hex(8);
      default -> throw error("unknown escape \\" + e);
    };
  }

  private int hex(int digits) {
    if (at + digits > text.length()) {
      throw error("hex digits expected");
    }
    int cp = 0;
    for (int k = 0; k < digits; k++) {
      int d = Character.digit(text.charAt(at + k), 16);
      if (d < 0) {
        throw error("hex digits expected");
      }
      cp = cp << 4 | d;
    }
    at += digits;
    if (cp > Character.MAX_CODE_POINT || (cp >= 0xd800 && cp <= 0xdfff)) {
      throw error("no character U+" + Integer.toHexString(cp).toUpperCase());
    }
    return cp;
  }

  private String name() {
    int start = at;
    while (at < text.length()) {
      char c = text.charAt(at);
      if (!(c >= 'a' && c <= 'z'
          || c >= 'A' && c <= 'Z'
          || c >= '0' && c <= '9'
          || c == '-'
          || c == '_')) {
        break;
      }
      at++;
    }
    return text.substring(start, at);
  }

  /** Spaces and comments; line ends too where {@code lines}. */
  private void skip(boolean lines) {
    while (at < text.length()) {
      char c = text.charAt(at);
      if (c == '#') {
        while (at < text.length() && text.charAt(at) != '\n') {
          at++;
        }
      } else if (c == ' ' || c == '\t' || (lines && (c == '\n' || c == '\r'))) {
        at++;
      } else if (c == '\\' && at + 1 < text.length() && text.charAt(at + 1) == '\n') {
        at += 2; // a line continued
      } else {
        break;
      }
    }
  }

  private IllegalArgumentException error(String what) {
    int line = 1;
    for (int k = 0; k < Math.min(at, text.length()); k++) {
      if (text.charAt(k) == '\n') {
        line++;
      }
    }
    return new IllegalArgumentException("grammar line " + line + ": " + what);
  }
}
