package io.flinfer.runtime.grammar;

import static io.flinfer.runtime.grammar.JsonSchemaGrammar.ANNOTATIONS;
import static io.flinfer.runtime.grammar.JsonSchemaGrammar.ANY;
import static io.flinfer.runtime.grammar.JsonSchemaGrammar.ANY_OF;
import static io.flinfer.runtime.grammar.JsonSchemaGrammar.ARRAY;
import static io.flinfer.runtime.grammar.JsonSchemaGrammar.INTEGER;
import static io.flinfer.runtime.grammar.JsonSchemaGrammar.JSON;
import static io.flinfer.runtime.grammar.JsonSchemaGrammar.KEYED;
import static io.flinfer.runtime.grammar.JsonSchemaGrammar.LITERALS;
import static io.flinfer.runtime.grammar.JsonSchemaGrammar.MAP;
import static io.flinfer.runtime.grammar.JsonSchemaGrammar.NUMBER;
import static io.flinfer.runtime.grammar.JsonSchemaGrammar.OBJECT;
import static io.flinfer.runtime.grammar.JsonSchemaGrammar.STRING;
import static io.flinfer.runtime.grammar.JsonSchemaGrammar.TAGGED;
import static io.flinfer.runtime.grammar.JsonSchemaGrammar.VALUE_STARTS;

import com.fasterxml.jackson.databind.JsonNode;
import io.flinfer.runtime.grammar.JsonSchemaGrammar.Node;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

/**
 * {@code anyOf}, {@code oneOf} and lists of types as {@link SchemaCompiler} makes them nodes: an
 * alternative chosen by the first byte written, alternatives another one takes every value of left
 * to it, objects told apart by what they write first ({@link ObjectUnions}), strings joined in one
 * automaton ({@link StringUnions}), arrays picked by their first item, and the keywords a union may
 * have beside it.
 */
final class Unions {
  private final SchemaCompiler c;
  private final StringUnions strings;
  private final ObjectUnions objects;

  Unions(SchemaCompiler c) {
    this.c = c;
    this.strings = new StringUnions(c);
    this.objects = new ObjectUnions(c);
  }

  /**
   * Keywords beside {@code anyOf}/{@code oneOf}, which a value must keep too: annotations, and a
   * {@code type} that every alternative's values already have (as {@code "type": "object"} beside a
   * union of objects); anything else is refused.
   */
  void besideUnion(JsonNode s, String union, List<Integer> alts, String path) {
    for (Iterator<String> it = s.fieldNames(); it.hasNext(); ) {
      String k = it.next();
      if (!k.equals(union) && !k.equals("type") && !ANNOTATIONS.contains(k)
          || k.equals("required")
          || k.equals("additionalProperties")) {
        throw SchemaCompiler.unsupported(
            path + "/" + k, k + " beside " + union + " is not supported");
      }
    }
    JsonNode type = s.get("type");
    for (int a = 0; type != null && a < alts.size(); a++) {
      if (!allOfType(c.nodes.get(alts.get(a)), type)) {
        throw SchemaCompiler.unsupported(
            path + "/type", "an alternative of " + union + " has values not of this type");
      }
    }
  }

  /** Whether every value of node {@code n} is of {@code type}. */
  private boolean allOfType(Node n, JsonNode type) {
    String t =
        switch (n.kind) {
          case OBJECT, TAGGED, KEYED, MAP -> "object";
          case ARRAY -> "array";
          case STRING -> "string";
          case INTEGER -> "integer";
          case NUMBER -> "number";
          case ANY -> n.opens == '{' ? "object" : n.opens == '[' ? "array" : null;
          default -> null;
        };
    if (n.kind == LITERALS) {
      for (byte[] l : n.literals) {
        if (!SchemaCompiler.ofType(SchemaCompiler.value(l), type)) {
          return false;
        }
      }
      return true;
    }
    if (n.kind == ANY_OF && n.alternatives != null) {
      for (int a : n.alternatives) {
        if (!allOfType(c.nodes.get(a), type)) {
          return false;
        }
      }
      return true;
    }
    if (t == null) {
      return false;
    }
    for (JsonNode x : type.isArray() ? type : JSON.createArrayNode().add(type)) {
      if (x.asText().equals(t) || (t.equals("integer") && x.asText().equals("number"))) {
        return true;
      }
    }
    return false;
  }

  /**
   * The node for alternatives {@code alts}: the one alternative, or an ANY_OF node whose first byte
   * picks the alternative (several objects become one tagged node, several arrays one array whose
   * first item picks). {@code exclusive}: a {@code oneOf}, whose value must be of one alternative.
   */
  int anyOf(List<Integer> alts, boolean exclusive, String path) {
    if (alts.size() == 1) {
      return alts.get(0);
    }
    List<Integer> objects = new ArrayList<>();
    List<Integer> arrays = new ArrayList<>();
    for (int a : alts) {
      if (c.nodes.get(a).kind == OBJECT) {
        objects.add(a);
      } else if (c.nodes.get(a).kind == ARRAY) {
        arrays.add(a);
      }
    }
    // Several objects, or several arrays: one node that tells them apart stands for them.
    if (objects.size() > 1) {
      alts = replaced(alts, objects, this.objects.of(objects, exclusive, path));
    }
    if (arrays.size() > 1) {
      alts = replaced(alts, arrays, arrays(arrays, exclusive, path));
    }
    if (alts.size() == 1) {
      return alts.get(0);
    }
    int id = c.add(ANY_OF);
    Node n = c.nodes.get(id);
    n.alternatives = alts.stream().mapToInt(Integer::intValue).toArray();
    n.byFirstByte = new int[256];
    java.util.Arrays.fill(n.byFirstByte, -1);
    for (int a : n.alternatives) {
      boolean[] first = new boolean[256];
      firstBytes(c, a, first, new java.util.HashSet<>());
      for (int b = 0; b < 256; b++) {
        if (first[b]) {
          if (n.byFirstByte[b] >= 0 && n.byFirstByte[b] != a) {
            throw SchemaCompiler.unsupported(
                path,
                "alternatives that can start with the same character ("
                    + (char) b
                    + ") are not supported");
          }
          n.byFirstByte[b] = a;
        }
      }
    }
    return id;
  }

  /** {@code alts} with the alternatives of {@code group} replaced by node {@code by}. */
  private static List<Integer> replaced(List<Integer> alts, List<Integer> group, int by) {
    List<Integer> rest = new ArrayList<>(alts);
    rest.removeAll(group);
    rest.add(by);
    return rest;
  }

  /**
   * Arrays whose items start with different characters (Pydantic's {@code list[int] | list[str]})
   * as one array whose first item's first byte picks the alternative ({@code byFirstByte}): the
   * array is that alternative's from then on, its items, counts and uniqueness. An empty array is
   * of every alternative that allows one; in a {@code oneOf}, of at most one.
   */
  private int arrays(List<Integer> arrays, boolean exclusive, String path) {
    int id = c.add(ARRAY);
    Node u = c.nodes.get(id);
    u.prefixItems = new int[0];
    u.minItems = Integer.MAX_VALUE;
    u.maxItems = 0;
    u.byFirstByte = new int[256];
    java.util.Arrays.fill(u.byFirstByte, -1);
    int empty = 0;
    for (int i = 0; i < arrays.size(); i++) {
      Node n = c.nodes.get(arrays.get(i));
      if (n.prefixItems.length > 0 || n.alternatives != null) {
        throw SchemaCompiler.unsupported(
            path, "arrays with prefixItems, or unions of arrays, in a union are not supported");
      }
      empty += n.minItems == 0 ? 1 : 0;
      u.minItems = Math.min(u.minItems, n.minItems);
      u.maxItems = Math.max(u.maxItems, n.maxItems);
      boolean[] first = new boolean[256];
      if (n.maxItems > 0) {
        firstBytes(c, n.item, first, new java.util.HashSet<>());
      }
      for (int b = 0; b < 256; b++) {
        if (first[b] && u.byFirstByte[b] >= 0) {
          throw SchemaCompiler.unsupported(
              path,
              "arrays whose items can start with the same character ("
                  + (char) b
                  + ")"
                  + " are not supported");
        }
        u.byFirstByte[b] = first[b] ? i : u.byFirstByte[b];
      }
    }
    if (exclusive && empty > 1) {
      throw SchemaCompiler.unsupported(
          path, "arrays that can both be empty are not supported in a oneOf");
    }
    u.alternatives = arrays.stream().mapToInt(Integer::intValue).toArray();
    return id;
  }

  /**
   * The alternatives of an {@code anyOf} or a list of types less those another one takes every
   * value of (not of a {@code oneOf}, whose values must be of one alternative only), so that unions
   * such as Pydantic's {@code int | float}, {@code str | date} or {@code Literal["a"] | str} need
   * not be told apart by their first character: a number without bounds takes every integer and
   * every numeric literal, an integer without bounds every integer literal, a string without
   * pattern, format or lengths every string and every string literal, and the literals (enum,
   * const, boolean, null) are one list.
   */
  List<Integer> merged(List<Integer> alts, String path) {
    alts = lessThanFree(alts);
    int anyString = -1;
    boolean anyNumber = false;
    boolean anyInteger = false;
    for (int a : alts) {
      Node n = c.nodes.get(a);
      if (n.kind == STRING
          && n.pattern == null
          && n.minLength == 0
          && n.maxLength == Integer.MAX_VALUE
          && anyString < 0) {
        anyString = a;
      }
      anyNumber |= n.kind == NUMBER && n.bounds == null;
      anyInteger |= n.kind == INTEGER && n.bounds == null;
    }
    List<Integer> kept = new ArrayList<>();
    List<JsonNode> values = new ArrayList<>();
    List<String> texts = new ArrayList<>();
    for (int a : alts) {
      Node n = c.nodes.get(a);
      if ((n.kind == INTEGER && anyNumber)
          || (n.kind == STRING && anyString >= 0 && a != anyString)) {
        continue;
      }
      if (n.kind != LITERALS) {
        kept.add(a);
        continue;
      }
      for (byte[] t : n.literals) {
        String text = new String(t, StandardCharsets.UTF_8);
        boolean numeric = t[0] == '-' || Character.isDigit(t[0]);
        boolean covered =
            (t[0] == '"' && anyString >= 0)
                || (numeric && anyNumber)
                || (numeric && anyInteger && text.matches("-?[0-9]+"));
        if (covered || texts.contains(text)) {
          continue;
        }
        texts.add(text);
        values.add(SchemaCompiler.value(t));
      }
    }
    if (anyString < 0) {
      strings.join(kept, values, path);
    }
    if (!values.isEmpty()) {
      kept.add(c.literals(values, path));
    }
    return kept;
  }

  /** The alternatives of a {@code oneOf}, its strings joined where none is of two of them. */
  List<Integer> disjointStringsJoined(List<Integer> alts, String path) {
    return strings.disjointJoined(alts, path);
  }

  /**
   * The alternatives less those a free value takes: all of them where one is any value, the objects
   * where one is any object, the arrays where one is any array.
   */
  private List<Integer> lessThanFree(List<Integer> alts) {
    int anyObject = -1;
    int anyArray = -1;
    for (int a : alts) {
      Node n = c.nodes.get(a);
      if (n.kind == ANY && n.opens == 0) {
        return List.of(a);
      }
      if (n.kind == ANY && n.opens == '{' && anyObject < 0) {
        anyObject = a;
      }
      if (n.kind == ANY && n.opens == '[' && anyArray < 0) {
        anyArray = a;
      }
    }
    List<Integer> kept = new ArrayList<>();
    for (int a : alts) {
      int k = c.nodes.get(a).kind;
      boolean object =
          k == OBJECT
              || k == TAGGED
              || k == KEYED
              || k == MAP
              || (k == ANY && c.nodes.get(a).opens == '{');
      boolean array = k == ARRAY || (k == ANY && c.nodes.get(a).opens == '[');
      if ((object && anyObject >= 0 && a != anyObject)
          || (array && anyArray >= 0 && a != anyArray)) {
        continue;
      }
      kept.add(a);
    }
    return kept;
  }

  /** The bytes a value of node {@code id} can start with. */
  static void firstBytes(SchemaCompiler c, int id, boolean[] out, java.util.Set<Integer> seen) {
    if (!seen.add(id)) {
      return;
    }
    Node n = c.nodes.get(id);
    switch (n.kind) {
      case OBJECT, TAGGED, KEYED, MAP -> out['{'] = true;
      case ARRAY -> out['['] = true;
      case ANY -> {
        for (int b : n.opens != 0 ? new int[] {n.opens} : VALUE_STARTS) {
          out[b] = true;
        }
      }
      case STRING -> out['"'] = true;
      case INTEGER, NUMBER -> {
        out['-'] = true;
        for (int d = '0'; d <= '9'; d++) {
          out[d] = true;
        }
      }
      case LITERALS -> {
        for (byte[] t : n.literals) {
          out[t[0] & 0xff] = true;
        }
      }
      default -> {
        // A definition still being compiled has no alternatives yet: it adds none.
        for (int a : n.alternatives == null ? new int[0] : n.alternatives) {
          firstBytes(c, a, out, seen);
        }
      }
    }
  }
}
