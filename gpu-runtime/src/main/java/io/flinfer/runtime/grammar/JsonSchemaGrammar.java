package io.flinfer.runtime.grammar;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A JSON Schema compiled into the nodes that {@link SchemaPrefix} walks: an object writes every one
 * of its properties, in the schema's order (as OpenAI's structured outputs do), so that each key is
 * a fixed text and the output is valid against the schema whichever properties it requires.
 * Immutable; {@link #compile} refuses, naming the keyword and where it is, every keyword that would
 * constrain the output in a way this grammar does not enforce, rather than produce output the
 * schema rejects.
 *
 * <p>Supported: {@code type} (object, array, string, integer, number, boolean, null, or a list of
 * them), {@code properties}, {@code required} (each one a listed property), {@code
 * additionalProperties} (no extra properties are written beside listed ones; a schema of it without
 * properties makes a map, whose keys the model writes), {@code items}, {@code minItems}, {@code
 * maxItems}, {@code minLength} and {@code maxLength} (in characters), {@code minimum}, {@code
 * maximum}, {@code exclusiveMinimum}, {@code exclusiveMaximum} and {@code multipleOf} on integers
 * and numbers ({@link DecimalBounds}), {@code pattern} and {@code format} on strings ({@link
 * StringPattern}), OpenAPI's number formats (annotations), {@code enum}, {@code const}, {@code
 * anyOf} and {@code oneOf} whose alternatives start with different characters or are objects told
 * apart by a property they share ({@code const} or {@code enum} values none of which is written as
 * the start of another: a discriminated union, such as a choice of function calls by name, its tag
 * written first), {@code $ref} into {@code $defs} or {@code definitions} (recursion included), and
 * the annotations ({@code title}, {@code description}, {@code default}, ...), and {@code allOf} of
 * one schema. Also {@code prefixItems} (and the drafts' array of {@code items} with {@code
 * additionalItems}) for tuples, and {@code minProperties}/{@code maxProperties} on objects whose
 * listed properties, all written, they allow.
 */
public final class JsonSchemaGrammar {
  static final int OBJECT = 0;
  static final int ARRAY = 1;
  static final int STRING = 2;
  static final int INTEGER = 3;
  static final int NUMBER = 4;
  static final int LITERALS = 5; // enum, const, boolean, null
  static final int ANY_OF = 6;
  static final int TAGGED = 7; // objects told apart by their first property's value (the tag)
  static final int MAP = 8; // an object of any keys, each value of one schema
  static final int ANY = 9; // a free value: any JSON value, or any object or array

  /** The most values an enum may list (a state keeps one bit per value still possible). */
  public static final int MAX_ENUM = 64;

  private static final Set<String> ANNOTATIONS =
      Set.of(
          "title",
          "description",
          "default",
          "examples",
          "$schema",
          "$id",
          "$comment",
          "$defs",
          "definitions",
          "additionalProperties",
          "required",
          "deprecated",
          "discriminator",
          "readOnly",
          "writeOnly");

  /** The keywords that constrain the output, all enforced. */
  private static final Set<String> KEYWORDS =
      Set.of(
          "type",
          "properties",
          "items",
          "prefixItems",
          "additionalItems",
          "minProperties",
          "maxProperties",
          "minItems",
          "maxItems",
          "uniqueItems",
          "enum",
          "const",
          "anyOf",
          "oneOf",
          "minimum",
          "maximum",
          "exclusiveMinimum",
          "exclusiveMaximum",
          "multipleOf",
          "minLength",
          "maxLength",
          "pattern",
          "format");

  /** The bytes a JSON value can start with. */
  private static final int[] VALUE_STARTS = {
    '{', '[', '"', 't', 'f', 'n', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9'
  };

  /** OpenAPI's number formats, annotations that say nothing a JSON value must keep. */
  private static final Set<String> NUMBER_FORMATS = Set.of("int32", "int64", "float", "double");

  /** The bounds of integers and numbers ({@link DecimalBounds}). */
  private static final Set<String> BOUNDS =
      Set.of("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf");

  private static final ObjectMapper JSON = new ObjectMapper();

  /** One node: its kind and what that kind needs. */
  static final class Node {
    int kind;
    byte[][] keys; // OBJECT: each property's key as JSON text, quotes included
    int[] values; // OBJECT: each property's node
    int[] prefixItems; // ARRAY: the nodes of its first items, one each
    int item = -1; // ARRAY: each later item's node (-1: none is written); MAP: each value's
    int minItems;
    int maxItems = Integer.MAX_VALUE;
    boolean uniqueItems; // ARRAY: no literal (item) value twice
    byte[][] literals; // LITERALS: each value as JSON text
    int[] alternatives; // ANY_OF
    int[] byFirstByte; // ANY_OF: the alternative a first byte picks, or -1
    int[] tagged; // TAGGED: the object each of the first property's values picks
    DecimalBounds bounds; // INTEGER, NUMBER: the bounds, or null
    int minLength; // STRING: the fewest characters
    int maxLength = Integer.MAX_VALUE; // STRING: the most characters
    StringPattern pattern; // STRING: what pattern and format allow, or null
    int opens; // ANY: the byte the value must start with ('{', '['), or 0 for any value
  }

  private final Node[] nodes;
  private final int root;

  private JsonSchemaGrammar(Node[] nodes, int root) {
    this.nodes = nodes;
    this.root = root;
  }

  /** The root node's id. */
  int root() {
    return root;
  }

  Node node(int id) {
    return nodes[id];
  }

  /**
   * Compiles {@code schemaJson}, whose root must be an object or an array schema.
   *
   * @throws IllegalArgumentException naming what is not JSON, not supported or contradictory
   */
  public static JsonSchemaGrammar compile(String schemaJson) {
    JsonNode root;
    try {
      root = JSON.readTree(schemaJson);
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException("json_schema is not JSON: " + e.getOriginalMessage(), e);
    }
    if (root == null || !root.isObject()) {
      throw new IllegalArgumentException("json_schema must be a JSON object");
    }
    Compiler c = new Compiler(root);
    int id = c.compile(root, "#");
    int kind = c.nodes.get(id).kind;
    boolean container = kind == ANY && c.nodes.get(id).opens != 0;
    if (kind != OBJECT && kind != TAGGED && kind != MAP && kind != ARRAY && !container) {
      // A bare number would not know where it ends; a string or literal is no document.
      throw new IllegalArgumentException("json_schema: the root must be an object or an array");
    }
    return new JsonSchemaGrammar(c.nodes.toArray(Node[]::new), id);
  }

  /** A new state at the start of an output this schema describes. */
  public SchemaPrefix start() {
    return new SchemaPrefix(this);
  }

  private static final class Compiler {
    final JsonNode root;
    final List<Node> nodes = new ArrayList<>();
    final Map<String, Integer> refs = new HashMap<>();

    Compiler(JsonNode root) {
      this.root = root;
    }

    /** Compiles {@code s} (at {@code path}) into a node; returns its id. */
    int compile(JsonNode s, String path) {
      if (s.isBoolean()) {
        if (!s.booleanValue()) {
          throw unsupported(path, "the schema false allows no value");
        }
        return free(0); // true: any value
      }
      if (!s.isObject()) {
        throw unsupported(path, "a schema must be an object");
      }
      if (s.has("$ref")) {
        if (s.size() > 1 && !onlyAnnotations(s, "$ref")) {
          throw unsupported(path, "$ref beside other keywords is not supported");
        }
        return ref(s.get("$ref").asText(), path);
      }
      if (s.has("allOf")) {
        JsonNode all = s.get("allOf");
        if (all.isArray() && all.size() == 1 && onlyAnnotations(s, "allOf")) {
          // As generators write a reference with a description: that one, a $ref kept as one.
          return compile(all.get(0), path + "/allOf/0");
        }
        return compile(AllOfMerge.merge(s, root, path), path);
      }
      for (Iterator<String> it = s.fieldNames(); it.hasNext(); ) {
        String k = it.next();
        if (!ANNOTATIONS.contains(k) && !KEYWORDS.contains(k)) {
          throw unsupported(path + "/" + k, "keyword " + k + " is not supported");
        }
      }
      if ((s.has("const") || s.has("enum"))
          && (hasAny(s, BOUNDS)
              || s.has("minLength")
              || s.has("maxLength")
              || s.has("pattern")
              || s.has("format"))) {
        throw unsupported(path, "bounds beside enum or const are not supported");
      }
      if (s.has("const")) {
        return literals(List.of(s.get("const")), path);
      }
      if (s.has("enum")) {
        List<JsonNode> values = new ArrayList<>();
        s.get("enum").forEach(values::add);
        if (values.isEmpty()) {
          throw unsupported(path + "/enum", "enum must list at least one value");
        }
        return literals(values, path);
      }
      String union = s.has("anyOf") ? "anyOf" : s.has("oneOf") ? "oneOf" : null;
      if (union != null) {
        List<Integer> alts = new ArrayList<>();
        int i = 0;
        for (JsonNode a : s.get(union)) {
          alts.add(compile(a, path + "/" + union + "/" + i++));
        }
        // A value of oneOf must be of exactly one alternative: none may take another's values.
        return anyOf(union.equals("anyOf") ? merged(alts, path) : alts, path);
      }
      JsonNode type = s.get("type");
      if (type == null
          && !s.has("additionalProperties")
          && !s.has("required")
          && onlyAnnotations(s, null)) {
        return free(0); // {} (with annotations only): any value, as Pydantic writes Any
      }
      if (type == null) {
        throw unsupported(path, "a schema needs a type (or enum, const, anyOf, $ref)");
      }
      if (type.isArray()) {
        List<Integer> alts = new ArrayList<>();
        for (JsonNode t : type) {
          alts.add(typed(s, t.asText(), path));
        }
        return anyOf(merged(alts, path), path);
      }
      return typed(s, type.asText(), path);
    }

    private int typed(JsonNode s, String type, String path) {
      switch (type) {
        case "object":
          return object(s, path);
        case "array":
          return array(s, path);
        case "string":
          return string(s, path);
        case "integer":
          numberFormat(s, path);
          return number(s, INTEGER, path);
        case "number":
          numberFormat(s, path);
          return number(s, NUMBER, path);
        case "boolean":
          return literals(
              List.of(
                  JSON.getNodeFactory().booleanNode(true),
                  JSON.getNodeFactory().booleanNode(false)),
              path);
        case "null":
          return literals(List.of(JSON.getNodeFactory().nullNode()), path);
        default:
          throw unsupported(path + "/type", "unknown type " + type);
      }
    }

    private int object(JsonNode s, String path) {
      JsonNode props = s.path("properties");
      JsonNode extra = s.path("additionalProperties");
      if (!s.has("properties")
          && !s.has("required")
          && (extra.isMissingNode() || extra.isEmpty() || extra.asBoolean(false))) {
        // No properties listed, any others allowed: any object ({"type": "object"}, a free-form
        // argument; dict[str, Any]).
        refuseCounts(s, path, "minProperties", "maxProperties");
        return free('{');
      }
      if (props.isEmpty() && extra.isObject() && !extra.isEmpty()) {
        // No listed properties, values of one schema: a map, keys written by the model.
        for (String k : List.of("minProperties", "maxProperties")) {
          if (s.has(k)) {
            // The model may write a key twice, which a reader counts once.
            throw unsupported(path + "/" + k, k + " on a map is not supported");
          }
        }
        int id = add(MAP);
        int value = compile(extra, path + "/additionalProperties");
        nodes.get(id).item = value;
        return id;
      }
      int id = add(OBJECT);
      List<byte[]> keys = new ArrayList<>();
      List<Integer> values = new ArrayList<>();
      for (Map.Entry<String, JsonNode> p : props.properties()) {
        keys.add(text(JSON.getNodeFactory().textNode(p.getKey())));
        values.add(compile(p.getValue(), path + "/properties/" + p.getKey()));
      }
      for (JsonNode r : s.path("required")) {
        if (!props.has(r.asText())) {
          throw unsupported(
              path + "/required", "required property " + r.asText() + " is not in properties");
        }
      }
      // Every listed property is written, so their count must be within these.
      if (count(s, "minProperties", 0, path) > keys.size()) {
        throw unsupported(
            path + "/minProperties", "minProperties is more than the " + keys.size() + " listed");
      }
      if (count(s, "maxProperties", Integer.MAX_VALUE, path) < keys.size()) {
        throw unsupported(
            path + "/maxProperties",
            "maxProperties is fewer than the " + keys.size() + " listed, which are all written");
      }
      Node n = nodes.get(id);
      n.keys = keys.toArray(byte[][]::new);
      n.values = values.stream().mapToInt(Integer::intValue).toArray();
      return id;
    }

    private int string(JsonNode s, String path) {
      int id = add(STRING);
      Node n = nodes.get(id);
      n.minLength = count(s, "minLength", 0, path);
      n.maxLength = count(s, "maxLength", Integer.MAX_VALUE, path);
      if (n.minLength > n.maxLength) {
        throw unsupported(path, "minLength is above maxLength");
      }
      if (s.has("pattern") || s.has("format")) {
        for (String k : List.of("pattern", "format")) {
          if (s.has(k) && !s.get(k).isTextual()) {
            throw unsupported(path + "/" + k, k + " must be a string");
          }
        }
        try {
          n.pattern =
              StringPattern.of(
                  s.has("pattern") ? s.get("pattern").asText() : null,
                  s.has("format") ? s.get("format").asText() : null);
        } catch (IllegalArgumentException e) {
          throw unsupported(path + (s.has("pattern") ? "/pattern" : "/format"), e.getMessage());
        }
      }
      return id;
    }

    /** A number's format: only OpenAPI's, which constrain nothing written. */
    private static void numberFormat(JsonNode s, String path) {
      if (s.has("format") && !NUMBER_FORMATS.contains(s.get("format").asText())) {
        throw unsupported(
            path + "/format",
            "format " + s.get("format").asText() + " on a number is not supported");
      }
    }

    /** An integer or a number, with its bounds if it has any. */
    private int number(JsonNode s, int kind, String path) {
      int id = add(kind);
      try {
        nodes.get(id).bounds = DecimalBounds.of(s, kind == INTEGER);
      } catch (IllegalArgumentException e) {
        throw unsupported(path, e.getMessage());
      }
      return id;
    }

    private static int count(JsonNode s, String key, int otherwise, String path) {
      JsonNode v = s.get(key);
      if (v == null) {
        return otherwise;
      }
      if (!v.canConvertToInt() || v.intValue() < 0 || !v.isIntegralNumber()) {
        throw unsupported(path + "/" + key, key + " must be a non-negative integer");
      }
      return v.intValue();
    }

    private static boolean hasAny(JsonNode s, Set<String> keys) {
      for (String k : keys) {
        if (s.has(k)) {
          return true;
        }
      }
      return false;
    }

    /**
     * An array: its first items of the schemas in {@code prefixItems} (or, as drafts before 2020-12
     * write a tuple, in an array of {@code items}), the rest of the schema in {@code items} (or
     * {@code additionalItems}). Where no schema is given for the rest, or it is {@code false},
     * nothing is written past the tuple.
     */
    private int array(JsonNode s, String path) {
      if (!s.has("items") && !s.has("prefixItems") && !s.has("additionalItems")) {
        // Any items: any array ({"type": "array"}, list[Any]).
        refuseCounts(s, path, "minItems", "maxItems", "uniqueItems");
        return free('[');
      }
      int id = add(ARRAY);
      JsonNode tuple = s.get("prefixItems");
      String tuplePath = path + "/prefixItems";
      String restKey = "items";
      if (s.path("items").isArray()) {
        if (tuple != null) {
          throw unsupported(path, "prefixItems beside an array of items is not supported");
        }
        tuple = s.get("items");
        tuplePath = path + "/items";
        restKey = "additionalItems";
      } else if (s.has("additionalItems")) {
        throw unsupported(
            path + "/additionalItems",
            "additionalItems is only supported beside an array of items");
      }
      if (tuple != null && !tuple.isArray()) {
        throw unsupported(tuplePath, "prefixItems must be an array of schemas");
      }
      JsonNode rest = s.get(restKey);
      if (tuple == null && rest == null) {
        throw unsupported(path, "an array needs items");
      }
      int[] prefix = new int[tuple == null ? 0 : tuple.size()];
      for (int i = 0; i < prefix.length; i++) {
        prefix[i] = compile(tuple.get(i), tuplePath + "/" + i);
      }
      int item = -1;
      if (rest != null && !(rest.isBoolean() && !rest.booleanValue())) {
        if (rest.isBoolean()) {
          throw unsupported(path + "/" + restKey, restKey + " true (any value) is not supported");
        }
        item = compile(rest, path + "/" + restKey);
      }
      Node n = nodes.get(id);
      n.prefixItems = prefix;
      n.item = item;
      n.minItems = count(s, "minItems", 0, path);
      n.maxItems = count(s, "maxItems", Integer.MAX_VALUE, path);
      if (n.maxItems < n.minItems) {
        throw unsupported(path, "minItems and maxItems contradict");
      }
      if (item < 0) {
        n.maxItems = Math.min(n.maxItems, prefix.length);
        if (n.minItems > n.maxItems) {
          throw unsupported(
              path, "minItems needs more items than prefixItems has, and no schema for the rest");
        }
      }
      unique(s, n, path);
      return id;
    }

    /**
     * {@code uniqueItems}: kept where every item is one of a list of literals (an enum, a const, a
     * boolean; a set of them, as Pydantic writes {@code set[Literal[...]]}), each written at most
     * once, so at most as many items as values. Other items would need every earlier item's text.
     */
    private void unique(JsonNode s, Node n, String path) {
      JsonNode u = s.get("uniqueItems");
      if (u == null || (u.isBoolean() && !u.booleanValue())) {
        return;
      }
      Node item = n.item < 0 ? null : nodes.get(n.item);
      if (!u.isBoolean()
          || n.prefixItems.length > 0
          || item == null
          || item.kind != LITERALS
          || !distinct(item.literals)) {
        throw unsupported(
            path + "/uniqueItems",
            "uniqueItems is only supported on items of one enum, const or boolean, without"
                + " prefixItems");
      }
      n.uniqueItems = true;
      n.maxItems = Math.min(n.maxItems, item.literals.length);
      if (n.minItems > n.maxItems) {
        throw unsupported(
            path,
            "minItems is more than the " + item.literals.length + " values uniqueItems allows");
      }
    }

    /** Whether no two literals are equal as JSON values (objects whose keys come in two orders). */
    private static boolean distinct(byte[][] literals) {
      List<JsonNode> seen = new ArrayList<>();
      for (byte[] t : literals) {
        try {
          JsonNode v = JSON.readTree(t);
          if (seen.contains(v)) {
            return false;
          }
          seen.add(v);
        } catch (java.io.IOException e) {
          throw new IllegalStateException(e);
        }
      }
      return true;
    }

    /** A free value: any JSON value ({@code opens} 0), or any object ('{') or array ('['). */
    private int free(int opens) {
      int id = add(ANY);
      nodes.get(id).opens = opens;
      return id;
    }

    /** Counts on a free object or array are not kept: refused by name. */
    private static void refuseCounts(JsonNode s, String path, String... keys) {
      for (String k : keys) {
        if (s.has(k)) {
          throw unsupported(
              path + "/" + k, k + " without properties or items listed is not supported");
        }
      }
    }

    private int literals(List<JsonNode> values, String path) {
      if (values.size() > MAX_ENUM) {
        throw unsupported(path, "more than " + MAX_ENUM + " values");
      }
      byte[][] texts = new byte[values.size()][];
      for (int i = 0; i < texts.length; i++) {
        texts[i] = text(values.get(i));
        for (int j = 0; j < i; j++) {
          if (isPrefix(texts[j], texts[i]) || isPrefix(texts[i], texts[j])) {
            throw unsupported(
                path,
                "values "
                    + new String(texts[j], StandardCharsets.UTF_8)
                    + " and "
                    + new String(texts[i], StandardCharsets.UTF_8)
                    + " cannot be told apart as they are written");
          }
        }
      }
      int id = add(LITERALS);
      nodes.get(id).literals = texts;
      return id;
    }

    private int anyOf(List<Integer> alts, String path) {
      if (alts.size() == 1) {
        return alts.get(0);
      }
      List<Integer> objects = new ArrayList<>();
      for (int a : alts) {
        if (nodes.get(a).kind == OBJECT) {
          objects.add(a);
        }
      }
      if (objects.size() > 1) {
        // Several objects: one tagged node stands for them all.
        List<Integer> rest = new ArrayList<>(alts);
        rest.removeAll(objects);
        rest.add(tagged(objects, path));
        alts = rest;
      }
      int id = add(ANY_OF);
      Node n = nodes.get(id);
      n.alternatives = alts.stream().mapToInt(Integer::intValue).toArray();
      n.byFirstByte = new int[256];
      java.util.Arrays.fill(n.byFirstByte, -1);
      for (int a : n.alternatives) {
        boolean[] first = new boolean[256];
        firstBytes(a, first, new java.util.HashSet<>());
        for (int b = 0; b < 256; b++) {
          if (first[b]) {
            if (n.byFirstByte[b] >= 0 && n.byFirstByte[b] != a) {
              throw unsupported(
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
     * The alternatives of an {@code anyOf} or a list of types less those another one takes every
     * value of (not of a {@code oneOf}, whose values must be of one alternative only), so that
     * unions such as Pydantic's {@code int | float}, {@code str | date} or {@code Literal["a"] |
     * str} need not be told apart by their first character: a number without bounds takes every
     * integer and every numeric literal, an integer without bounds every integer literal, a string
     * without pattern, format or lengths every string and every string literal, and the literals
     * (enum, const, boolean, null) are one list.
     */
    private List<Integer> merged(List<Integer> alts, String path) {
      alts = lessThanFree(alts);
      int anyString = -1;
      boolean anyNumber = false;
      boolean anyInteger = false;
      for (int a : alts) {
        Node n = nodes.get(a);
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
      int literalNodes = 0;
      boolean dropped = false;
      for (int a : alts) {
        Node n = nodes.get(a);
        if ((n.kind == INTEGER && anyNumber)
            || (n.kind == STRING && anyString >= 0 && a != anyString)) {
          continue;
        }
        if (n.kind != LITERALS) {
          kept.add(a);
          continue;
        }
        literalNodes++;
        for (byte[] t : n.literals) {
          String text = new String(t, StandardCharsets.UTF_8);
          boolean numeric = t[0] == '-' || Character.isDigit(t[0]);
          boolean covered =
              (t[0] == '"' && anyString >= 0)
                  || (numeric && anyNumber)
                  || (numeric && anyInteger && text.matches("-?[0-9]+"));
          if (covered || texts.contains(text)) {
            dropped = true;
            continue;
          }
          texts.add(text);
          try {
            values.add(JSON.readTree(t));
          } catch (java.io.IOException e) {
            throw new IllegalStateException(e);
          }
        }
      }
      if (literalNodes == 1 && !dropped) {
        return withLiterals(kept, alts); // the node as it was
      }
      if (!values.isEmpty()) {
        kept.add(literals(values, path));
      }
      return kept;
    }

    /**
     * The alternatives less those a free value takes: all of them where one is any value, the
     * objects where one is any object, the arrays where one is any array.
     */
    private List<Integer> lessThanFree(List<Integer> alts) {
      int anyObject = -1;
      int anyArray = -1;
      for (int a : alts) {
        Node n = nodes.get(a);
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
        int k = nodes.get(a).kind;
        boolean object =
            k == OBJECT || k == TAGGED || k == MAP || (k == ANY && nodes.get(a).opens == '{');
        boolean array = k == ARRAY || (k == ANY && nodes.get(a).opens == '[');
        if ((object && anyObject >= 0 && a != anyObject)
            || (array && anyArray >= 0 && a != anyArray)) {
          continue;
        }
        kept.add(a);
      }
      return kept;
    }

    /** {@code kept} with the one literals node of {@code alts} back in its place among them. */
    private List<Integer> withLiterals(List<Integer> kept, List<Integer> alts) {
      List<Integer> out = new ArrayList<>();
      for (int a : alts) {
        if (kept.contains(a) || nodes.get(a).kind == LITERALS) {
          out.add(a);
        }
      }
      return out;
    }

    /**
     * Objects that share a property whose values are literals (a {@code const} or {@code enum}),
     * none written as the start of another: a discriminated union. That property is written first
     * (the first such property of the first object, wherever it is listed; the order of an object's
     * properties says nothing about its validity), so the value written picks the object, whose
     * other properties follow in their order.
     */
    private int tagged(List<Integer> objects, String path) {
      byte[] key = tellingKey(objects, path);
      List<JsonNode> values = new ArrayList<>();
      List<Integer> picks = new ArrayList<>();
      for (int o : objects) {
        int first = withKeyFirst(o, key);
        for (byte[] t : nodes.get(nodes.get(first).values[0]).literals) {
          try {
            values.add(JSON.readTree(t));
          } catch (java.io.IOException e) {
            throw new IllegalStateException(e);
          }
          picks.add(first);
        }
      }
      int tag = literals(values, path);
      int id = add(TAGGED);
      Node n = nodes.get(id);
      n.keys = new byte[][] {key};
      n.values = new int[] {tag};
      n.alternatives = objects.stream().mapToInt(Integer::intValue).toArray();
      n.tagged = picks.stream().mapToInt(Integer::intValue).toArray();
      return id;
    }

    /** The key of the first property of the first object that every object has with literals. */
    private byte[] tellingKey(List<Integer> objects, String path) {
      Node first = nodes.get(objects.get(0));
      for (int k = 0; k < first.keys.length; k++) {
        boolean telling = true;
        for (int o : objects) {
          int at = keyIndex(nodes.get(o), first.keys[k]);
          telling &= at >= 0 && nodes.get(nodes.get(o).values[at]).kind == LITERALS;
        }
        if (telling) {
          return first.keys[k];
        }
      }
      throw unsupported(
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
     * Object {@code o}, or a copy of it with property {@code key} moved first (a copy, as the
     * object may be written elsewhere too).
     */
    private int withKeyFirst(int o, byte[] key) {
      Node n = nodes.get(o);
      int at = keyIndex(n, key);
      if (at == 0) {
        return o;
      }
      int id = add(OBJECT);
      Node c = nodes.get(id);
      c.keys = new byte[n.keys.length][];
      c.values = new int[n.keys.length];
      c.keys[0] = n.keys[at];
      c.values[0] = n.values[at];
      for (int k = 0, j = 1; k < n.keys.length; k++) {
        if (k != at) {
          c.keys[j] = n.keys[k];
          c.values[j++] = n.values[k];
        }
      }
      return id;
    }

    /** The bytes a value of node {@code id} can start with. */
    private void firstBytes(int id, boolean[] out, java.util.Set<Integer> seen) {
      if (!seen.add(id)) {
        return;
      }
      Node n = nodes.get(id);
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

    private int ref(String ref, String path) {
      Integer known = refs.get(ref);
      if (known != null) {
        return known;
      }
      String prefix =
          ref.startsWith("#/$defs/")
              ? "$defs"
              : ref.startsWith("#/definitions/") ? "definitions" : null;
      if (prefix == null) {
        throw unsupported(path + "/$ref", "only #/$defs/... and #/definitions/... are supported");
      }
      String name = ref.substring(prefix.length() + 3);
      JsonNode target = root.path(prefix).get(name);
      if (target == null) {
        throw unsupported(path + "/$ref", ref + " is not defined");
      }
      // A placeholder first, so that a definition may refer to itself; then the definition's
      // node stands in its place.
      int alias = add(ANY_OF);
      refs.put(ref, alias);
      int body = compile(target, "#/" + prefix + "/" + name);
      nodes.set(alias, nodes.get(body));
      return alias;
    }

    private int add(int kind) {
      Node n = new Node();
      n.kind = kind;
      nodes.add(n);
      return nodes.size() - 1;
    }

    private static boolean onlyAnnotations(JsonNode s, String except) {
      for (Iterator<String> it = s.fieldNames(); it.hasNext(); ) {
        String k = it.next();
        if (!k.equals(except) && !ANNOTATIONS.contains(k)) {
          return false;
        }
      }
      return true;
    }

    private static boolean isPrefix(byte[] a, byte[] b) {
      if (a.length > b.length) {
        return false;
      }
      for (int i = 0; i < a.length; i++) {
        if (a[i] != b[i]) {
          return false;
        }
      }
      return true;
    }

    private static byte[] text(JsonNode v) {
      try {
        return JSON.writeValueAsBytes(v);
      } catch (JsonProcessingException e) {
        throw new IllegalStateException(e);
      }
    }

    private static IllegalArgumentException unsupported(String path, String what) {
      return new IllegalArgumentException("json_schema at " + path + ": " + what);
    }
  }
}
