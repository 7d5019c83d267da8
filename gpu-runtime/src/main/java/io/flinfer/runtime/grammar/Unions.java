package io.flinfer.runtime.grammar;

import static io.flinfer.runtime.grammar.JsonSchemaGrammar.ANNOTATIONS;
import static io.flinfer.runtime.grammar.JsonSchemaGrammar.ANY;
import static io.flinfer.runtime.grammar.JsonSchemaGrammar.ANY_OF;
import static io.flinfer.runtime.grammar.JsonSchemaGrammar.ARRAY;
import static io.flinfer.runtime.grammar.JsonSchemaGrammar.INTEGER;
import static io.flinfer.runtime.grammar.JsonSchemaGrammar.JSON;
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
 * to it, objects told apart by a shared property's literal values (a discriminated union), and the
 * keywords a union may have beside it.
 */
final class Unions {
  private final SchemaCompiler c;
  private final StringUnions strings;

  Unions(SchemaCompiler c) {
    this.c = c;
    this.strings = new StringUnions(c);
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
          case OBJECT, TAGGED, MAP -> "object";
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
    if (objects.size() > 1) {
      // Several objects: one tagged node stands for them all.
      List<Integer> rest = new ArrayList<>(alts);
      rest.removeAll(objects);
      rest.add(tagged(objects, path));
      alts = rest;
    }
    if (arrays.size() > 1) {
      List<Integer> rest = new ArrayList<>(alts);
      rest.removeAll(arrays);
      rest.add(arrays(arrays, exclusive, path));
      alts = rest;
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
      firstBytes(a, first, new java.util.HashSet<>());
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
        firstBytes(n.item, first, new java.util.HashSet<>());
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
      strings.join(kept, values, texts, path);
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
          k == OBJECT || k == TAGGED || k == MAP || (k == ANY && c.nodes.get(a).opens == '{');
      boolean array = k == ARRAY || (k == ANY && c.nodes.get(a).opens == '[');
      if ((object && anyObject >= 0 && a != anyObject)
          || (array && anyArray >= 0 && a != anyArray)) {
        continue;
      }
      kept.add(a);
    }
    return kept;
  }

  /**
   * Objects that share a property whose values are literals (a {@code const} or {@code enum}), none
   * written as the start of another: a discriminated union. That property is written first (the
   * first such property of the first object, wherever it is listed; the order of an object's
   * properties says nothing about its validity), so the value written picks the object, whose other
   * properties follow in their order.
   */
  private int tagged(List<Integer> objects, String path) {
    byte[] key = tellingKey(objects, path);
    List<JsonNode> values = new ArrayList<>();
    List<Integer> picks = new ArrayList<>();
    for (int o : objects) {
      int first = withKeyFirst(o, key);
      for (byte[] t : c.nodes.get(c.nodes.get(first).values[0]).literals) {
        values.add(SchemaCompiler.value(t));
        picks.add(first);
      }
    }
    int tag = c.literals(values, path);
    int id = c.add(TAGGED);
    Node n = c.nodes.get(id);
    n.keys = new byte[][] {key};
    n.values = new int[] {tag};
    n.alternatives = objects.stream().mapToInt(Integer::intValue).toArray();
    n.tagged = picks.stream().mapToInt(Integer::intValue).toArray();
    return id;
  }

  /** The key of the first property of the first object that every object has with literals. */
  private byte[] tellingKey(List<Integer> objects, String path) {
    Node first = c.nodes.get(objects.get(0));
    for (int k = 0; k < first.keys.length; k++) {
      boolean telling = true;
      for (int o : objects) {
        int at = keyIndex(c.nodes.get(o), first.keys[k]);
        telling &= at >= 0 && c.nodes.get(c.nodes.get(o).values[at]).kind == LITERALS;
      }
      if (telling) {
        return first.keys[k];
      }
    }
    throw SchemaCompiler.unsupported(
        path, "object alternatives must share a property whose const or enum tells them apart");
  }

  private static int keyIndex(Node n, byte[] key) {
    for (int k = 0; k < n.keys.length; k++) {
      if (java.util.Arrays.equals(n.keys[k], key)) {
        return k;
      }
    }
    return -1;
  }

  /**
   * Object {@code o}, or a copy of it with property {@code key} moved first (a copy, as the object
   * may be written elsewhere too).
   */
  private int withKeyFirst(int o, byte[] key) {
    Node n = c.nodes.get(o);
    int at = keyIndex(n, key);
    if (at == 0) {
      return o;
    }
    int id = c.add(OBJECT);
    Node copy = c.nodes.get(id);
    copy.keys = new byte[n.keys.length][];
    copy.values = new int[n.keys.length];
    copy.keys[0] = n.keys[at];
    copy.values[0] = n.values[at];
    for (int k = 0, j = 1; k < n.keys.length; k++) {
      if (k != at) {
        copy.keys[j] = n.keys[k];
        copy.values[j++] = n.values[k];
      }
    }
    return id;
  }

  /** The bytes a value of node {@code id} can start with. */
  private void firstBytes(int id, boolean[] out, java.util.Set<Integer> seen) {
    if (!seen.add(id)) {
      return;
    }
    Node n = c.nodes.get(id);
    switch (n.kind) {
      case OBJECT, TAGGED, MAP -> out['{'] = true;
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
          firstBytes(a, out, seen);
        }
      }
    }
  }
}
