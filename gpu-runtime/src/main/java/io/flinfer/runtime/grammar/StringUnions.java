package io.flinfer.runtime.grammar;

import static io.flinfer.runtime.grammar.JsonSchemaGrammar.LITERALS;
import static io.flinfer.runtime.grammar.JsonSchemaGrammar.STRING;

import com.fasterxml.jackson.databind.JsonNode;
import io.flinfer.runtime.grammar.JsonSchemaGrammar.Node;
import java.util.ArrayList;
import java.util.List;

/**
 * Strings of a union that cannot be told apart by their first character (all start with a quote)
 * made one string node, whose automaton takes the strings of each ({@link StringPattern}): strings
 * with a pattern, format or lengths, and string literals.
 */
final class StringUnions {
  private final SchemaCompiler c;

  StringUnions(SchemaCompiler c) {
    this.c = c;
  }

  /**
   * The alternatives of a {@code oneOf} with its strings joined into one where no string is of two
   * of them (as {@code oneOf} requires), as date or date-time: they cannot be told apart by their
   * first character, but one automaton tells them apart as they are written.
   */
  List<Integer> disjointJoined(List<Integer> alts, String path) {
    List<List<StringPattern.Part>> each = new ArrayList<>();
    for (int a : alts) {
      Node n = c.nodes.get(a);
      if (n.kind == STRING) {
        each.add(partsOf(n));
      } else if (n.kind == LITERALS) {
        for (byte[] t : n.literals) {
          if (t[0] == '"') {
            each.add(List.of(StringPattern.Part.literal(SchemaCompiler.value(t).asText())));
          }
        }
      }
    }
    if (alts.stream().noneMatch(a -> c.nodes.get(a).kind == STRING)) {
      return alts;
    }
    List<StringPattern> patterns = new ArrayList<>();
    for (List<StringPattern.Part> parts : each) {
      patterns.add(SchemaCompiler.pattern(parts, Integer.MAX_VALUE, path));
    }
    for (int i = 0; i < patterns.size(); i++) {
      for (int j = 0; j < i; j++) {
        if (patterns.get(i).overlaps(patterns.get(j))) {
          return alts; // refused as alternatives that start alike
        }
      }
    }
    List<Integer> kept = new ArrayList<>();
    List<JsonNode> values = new ArrayList<>();
    for (int a : alts) {
      Node n = c.nodes.get(a);
      if (n.kind != LITERALS) {
        kept.add(a);
        continue;
      }
      for (byte[] t : n.literals) {
        values.add(SchemaCompiler.value(t));
      }
    }
    join(kept, values, path);
    if (!values.isEmpty()) {
      kept.add(c.literals(values, path));
    }
    return kept;
  }

  /**
   * Strings with a pattern, format or lengths, and string literals, as one string node whose
   * automaton takes any of them, where there are at least two and one is not a literal: taken from
   * {@code kept} and {@code values}, the joined node added to {@code kept}.
   */
  void join(List<Integer> kept, List<JsonNode> values, String path) {
    List<Integer> strings = new ArrayList<>();
    for (int a : kept) {
      if (c.nodes.get(a).kind == STRING) {
        strings.add(a);
      }
    }
    long stringValues = values.stream().filter(JsonNode::isTextual).count();
    if (strings.isEmpty() || strings.size() + Math.min(stringValues, 1) < 2) {
      return;
    }
    List<StringPattern.Part> parts = new ArrayList<>();
    for (int a : strings) {
      parts.addAll(partsOf(c.nodes.get(a)));
    }
    for (int v = values.size() - 1; v >= 0; v--) {
      if (values.get(v).isTextual()) {
        parts.add(StringPattern.Part.literal(values.get(v).asText()));
        values.remove(v);
      }
    }
    kept.removeAll(strings);
    // A most length that every part shares stays on the node, checked against each state's fewest
    // characters to a match; different ones join the automaton, each part's its own.
    int most = Integer.MIN_VALUE;
    boolean shared = true;
    for (StringPattern.Part p : parts) {
      if (p.literal() == null) {
        shared &= most == Integer.MIN_VALUE || most == p.maxLength();
        most = p.maxLength();
      }
    }
    for (StringPattern.Part p : parts) {
      if (p.literal() != null) {
        shared &= p.literal().codePointCount(0, p.literal().length()) <= most;
      }
    }
    int maxLength = shared ? most : Integer.MAX_VALUE;
    if (shared) {
      parts.replaceAll(
          p ->
              new StringPattern.Part(
                  p.pattern(), p.format(), p.literal(), p.minLength(), Integer.MAX_VALUE));
    }
    int id = c.add(STRING);
    Node n = c.nodes.get(id);
    n.maxLength = maxLength;
    n.pattern = SchemaCompiler.pattern(parts, maxLength, path);
    kept.add(id);
  }

  /** The parts of string node {@code n}, its lengths in each. */
  private static List<StringPattern.Part> partsOf(Node n) {
    List<StringPattern.Part> own =
        n.pattern == null
            ? List.of(StringPattern.Part.of(null, null, 0, Integer.MAX_VALUE))
            : n.pattern.parts();
    List<StringPattern.Part> parts = new ArrayList<>();
    for (StringPattern.Part p : own) {
      parts.add(
          new StringPattern.Part(
              p.pattern(),
              p.format(),
              p.literal(),
              Math.max(p.minLength(), n.minLength),
              Math.min(p.maxLength(), n.maxLength)));
    }
    return parts;
  }
}
