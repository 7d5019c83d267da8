package io.flinfer.runtime.grammar;

import static io.flinfer.runtime.grammar.JsonSchemaGrammar.ANNOTATIONS;
import static io.flinfer.runtime.grammar.JsonSchemaGrammar.ANY;
import static io.flinfer.runtime.grammar.JsonSchemaGrammar.ANY_OF;
import static io.flinfer.runtime.grammar.JsonSchemaGrammar.ARRAY;
import static io.flinfer.runtime.grammar.JsonSchemaGrammar.BOUNDS;
import static io.flinfer.runtime.grammar.JsonSchemaGrammar.INTEGER;
import static io.flinfer.runtime.grammar.JsonSchemaGrammar.JSON;
import static io.flinfer.runtime.grammar.JsonSchemaGrammar.KEYWORDS;
import static io.flinfer.runtime.grammar.JsonSchemaGrammar.LITERALS;
import static io.flinfer.runtime.grammar.JsonSchemaGrammar.MAP;
import static io.flinfer.runtime.grammar.JsonSchemaGrammar.MAX_ENUM;
import static io.flinfer.runtime.grammar.JsonSchemaGrammar.NUMBER;
import static io.flinfer.runtime.grammar.JsonSchemaGrammar.NUMBER_FORMATS;
import static io.flinfer.runtime.grammar.JsonSchemaGrammar.OBJECT;
import static io.flinfer.runtime.grammar.JsonSchemaGrammar.STRING;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.flinfer.runtime.grammar.JsonSchemaGrammar.Node;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Compiles a JSON Schema into {@link JsonSchemaGrammar}'s nodes, keyword by keyword, refusing by
 * name what it does not enforce; unions are {@link Unions}'.
 */
final class SchemaCompiler {
  final JsonNode root;
  final List<Node> nodes = new ArrayList<>();
  final Map<String, Integer> refs = new HashMap<>();
  private final Unions unions = new Unions(this);

  SchemaCompiler(JsonNode root) {
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
    if (s.has("const") || s.has("enum")) {
      return literals(listed(s, path), path);
    }
    String union = s.has("anyOf") ? "anyOf" : s.has("oneOf") ? "oneOf" : null;
    if (union != null) {
      List<Integer> alts = new ArrayList<>();
      int i = 0;
      for (JsonNode a : s.get(union)) {
        alts.add(compile(a, path + "/" + union + "/" + i++));
      }
      unions.besideUnion(s, union, alts, path);
      // A value of oneOf must be of exactly one alternative: none may take another's values.
      boolean anyOf = union.equals("anyOf");
      return unions.anyOf(
          anyOf ? unions.merged(alts, path) : unions.disjointStringsJoined(alts, path),
          !anyOf,
          path);
    }
    JsonNode type = s.get("type");
    if (type == null
        && !s.has("additionalProperties")
        && !s.has("patternProperties")
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
      return unions.anyOf(unions.merged(alts, path), false, path);
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
                JSON.getNodeFactory().booleanNode(true), JSON.getNodeFactory().booleanNode(false)),
            path);
      case "null":
        return literals(List.of(JSON.getNodeFactory().nullNode()), path);
      default:
        throw unsupported(path + "/type", "unknown type " + type);
    }
  }

  private int object(JsonNode s, String path) {
    if (s.has("patternProperties")) {
      return patternMap(s, path);
    }
    JsonNode props = s.path("properties");
    JsonNode extra = s.path("additionalProperties");
    // Other properties of any value: additionalProperties absent, true or {} (not false, which a
    // node's isEmpty() would take for an empty schema).
    boolean anyValue =
        extra.isMissingNode()
            || (extra.isObject() && extra.isEmpty())
            || (extra.isBoolean() && extra.booleanValue());
    if (!s.has("properties") && !s.has("required") && anyValue && !s.has("propertyNames")) {
      // No properties listed, any others allowed: any object ({"type": "object"}, a free-form
      // argument; dict[str, Any]).
      refuseCounts(s, path, "minProperties", "maxProperties", "dependentRequired", "dependencies");
      return free('{');
    }
    if (props.isEmpty()
        && !s.has("required")
        && ((extra.isObject() && !extra.isEmpty()) || (anyValue && s.has("propertyNames")))) {
      // No listed properties, values of one schema: a map, keys written by the model.
      return map(s, anyValue ? free(0) : compile(extra, path + "/additionalProperties"), path);
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
    dependentRequired(s, props, path);
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
      // The least length joins the automaton, so that a state it takes can always be completed;
      // the most is checked against each state's fewest characters to a match (StringPattern).
      StringPattern.Part part =
          StringPattern.Part.of(
              s.has("pattern") ? s.get("pattern").asText() : null,
              s.has("format") ? s.get("format").asText() : null,
              n.minLength,
              Integer.MAX_VALUE);
      n.pattern =
          pattern(List.of(part), n.maxLength, path + (s.has("pattern") ? "/pattern" : "/format"));
    }
    return id;
  }

  /**
   * The automaton of {@code parts}, refused where it cannot be made or takes no string of at most
   * {@code maxLength} characters.
   */
  static StringPattern pattern(List<StringPattern.Part> parts, int maxLength, String path) {
    StringPattern p;
    try {
      p = StringPattern.of(parts);
    } catch (IllegalArgumentException e) {
      throw unsupported(path, e.getMessage());
    }
    if (p.fewestToAccept(p.start()) > maxLength) {
      throw unsupported(
          path,
          "no string of at most "
              + maxLength
              + " characters matches "
              + StringPattern.describe(parts));
    }
    return p;
  }

  /** A number's format: only OpenAPI's, which constrain nothing written. */
  private static void numberFormat(JsonNode s, String path) {
    if (s.has("format") && !NUMBER_FORMATS.contains(s.get("format").asText())) {
      throw unsupported(
          path + "/format", "format " + s.get("format").asText() + " on a number is not supported");
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
          path + "/additionalItems", "additionalItems is only supported beside an array of items");
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
    // Strings that can always grow and integers without bounds: an item equal to one before can
    // always be made another, so no array is begun that cannot end.
    boolean growing =
        item != null
            && ((item.kind == STRING && item.pattern == null && item.maxLength == Integer.MAX_VALUE)
                || (item.kind == INTEGER && item.bounds == null));
    if (!u.isBoolean()
        || n.prefixItems.length > 0
        || item == null
        || !(growing || (item.kind == LITERALS && distinct(item.literals)))) {
      throw unsupported(
          path + "/uniqueItems",
          "uniqueItems is only supported on items of one enum, const or boolean, of strings"
              + " without pattern, format or maxLength, or of integers without bounds, without"
              + " prefixItems");
    }
    n.uniqueItems = true;
    if (growing) {
      return;
    }
    n.maxItems = Math.min(n.maxItems, item.literals.length);
    if (n.minItems > n.maxItems) {
      throw unsupported(
          path, "minItems is more than the " + item.literals.length + " values uniqueItems allows");
    }
  }

  /** Whether no two literals are equal as JSON values (objects whose keys come in two orders). */
  private static boolean distinct(byte[][] literals) {
    List<JsonNode> seen = new ArrayList<>();
    for (byte[] t : literals) {
      JsonNode v = value(t);
      if (seen.contains(v)) {
        return false;
      }
      seen.add(v);
    }
    return true;
  }

  /** A literal's JSON text (written by this compiler, so valid) as a value. */
  static JsonNode value(byte[] literal) {
    try {
      return JSON.readTree(literal);
    } catch (java.io.IOException e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * The values {@code const} and {@code enum} list, less those not of the schema's {@code type}
   * beside them (a value must be of both), and only the const where both are given.
   */
  private List<JsonNode> listed(JsonNode s, String path) {
    if (s.has("anyOf") || s.has("oneOf")) {
      throw unsupported(path, "enum or const beside anyOf or oneOf is not supported");
    }
    List<JsonNode> values = new ArrayList<>();
    if (s.has("enum")) {
      s.get("enum").forEach(values::add);
      if (values.isEmpty()) {
        throw unsupported(path + "/enum", "enum must list at least one value");
      }
    }
    if (s.has("const")) {
      JsonNode c = s.get("const");
      if (s.has("enum") && !values.contains(c)) {
        throw unsupported(path, "its const is not in its enum: no value is allowed");
      }
      values = List.of(c);
    }
    JsonNode type = s.get("type");
    if (type != null) {
      values = values.stream().filter(v -> ofType(v, type)).toList();
    }
    if (values.isEmpty()) {
      throw unsupported(
          path, "no value of its " + (s.has("enum") ? "enum" : "const") + " is of its type");
    }
    return values;
  }

  /** Whether {@code v} is of {@code type} (a type's name, or a list of them). */
  static boolean ofType(JsonNode v, JsonNode type) {
    if (type.isArray()) {
      for (JsonNode t : type) {
        if (ofType(v, t)) {
          return true;
        }
      }
      return false;
    }
    return switch (type.asText()) {
      case "integer" -> v.isNumber() && v.decimalValue().stripTrailingZeros().scale() <= 0;
      case "number" -> v.isNumber();
      case "string" -> v.isTextual();
      case "boolean" -> v.isBoolean();
      case "null" -> v.isNull();
      case "object" -> v.isObject();
      case "array" -> v.isArray();
      default -> false;
    };
  }

  /**
   * An object of {@code patternProperties} with one pattern (Pydantic's dict keyed by a constrained
   * string): a map whose keys match it, each value of its schema. Only such keys are written, which
   * every {@code additionalProperties} allows; {@code propertyNames} may add lengths or a format.
   */
  private int patternMap(JsonNode s, String path) {
    JsonNode patterns = s.get("patternProperties");
    String at = path + "/patternProperties";
    if (!patterns.isObject() || patterns.size() != 1) {
      throw unsupported(at, "patternProperties is supported with one pattern");
    }
    if (!s.path("properties").isEmpty() || s.has("required")) {
      throw unsupported(at, "patternProperties beside properties is not supported");
    }
    Map.Entry<String, JsonNode> only = patterns.properties().iterator().next();
    ObjectNode names =
        s.path("propertyNames").isObject()
            ? ((ObjectNode) s.get("propertyNames")).deepCopy()
            : JSON.createObjectNode();
    for (String k : List.of("pattern", "enum", "const", "$ref", "anyOf", "oneOf", "allOf")) {
      if (names.has(k)) {
        throw unsupported(
            path + "/propertyNames/" + k, k + " beside patternProperties is not supported");
      }
    }
    if (s.has("propertyNames") && !s.get("propertyNames").isObject()
        || names.has("type") && !names.get("type").asText().equals("string")) {
      throw unsupported(path + "/propertyNames", "propertyNames must describe strings");
    }
    names.put("type", "string").put("pattern", only.getKey());
    ObjectNode map = ((ObjectNode) s).deepCopy();
    map.remove(List.of("patternProperties", "additionalProperties", "properties"));
    map.set("propertyNames", names);
    return map(map, compile(only.getValue(), at + "/" + only.getKey()), path);
  }

  /**
   * A map whose values are of node {@code value}: keys of {@code propertyNames} (a string schema,
   * or an enum of strings, each then written at most once, so that {@code minProperties} and {@code
   * maxProperties} count them; other keys may come twice, which a reader counts once, so counts are
   * kept only for enum keys).
   */
  private int map(JsonNode s, int value, String path) {
    refuseCounts(s, path, "dependentRequired", "dependencies");
    int id = add(MAP);
    Node n = nodes.get(id);
    n.item = value;
    if (s.has("propertyNames")) {
      JsonNode names = s.get("propertyNames");
      if (names.isObject()
          && !names.has("type")
          && !names.has("enum")
          && !names.has("const")
          && !names.has("$ref")) {
        // Keys are strings: a pattern or lengths alone are about strings.
        names = ((ObjectNode) names.deepCopy()).put("type", "string");
      }
      int key = compile(names, path + "/propertyNames");
      Node k = nodes.get(key);
      boolean literals = k.kind == LITERALS;
      for (int i = 0; literals && i < k.literals.length; i++) {
        literals = k.literals[i][0] == '"';
      }
      if (k.kind != STRING && !literals) {
        throw unsupported(
            path + "/propertyNames",
            "propertyNames must describe strings (or list them in an enum)");
      }
      n.keyNode = key;
      n.uniqueItems = literals;
    }
    if (!n.uniqueItems) {
      for (String k : List.of("minProperties", "maxProperties")) {
        if (s.has(k)) {
          throw unsupported(
              path + "/" + k, k + " on a map is only supported with an enum of propertyNames");
        }
      }
      return id;
    }
    int keys = nodes.get(n.keyNode).literals.length;
    n.minItems = count(s, "minProperties", 0, path);
    n.maxItems = Math.min(count(s, "maxProperties", Integer.MAX_VALUE, path), keys);
    if (n.minItems > n.maxItems) {
      throw unsupported(path, "minProperties is more than the " + keys + " keys allowed");
    }
    return id;
  }

  /** A free value: any JSON value ({@code opens} 0), or any object ('{') or array ('['). */
  private int free(int opens) {
    int id = add(ANY);
    nodes.get(id).opens = opens;
    return id;
  }

  /** Counts on a free object or array are not kept: refused by name. */
  /**
   * {@code dependentRequired} (and draft 7's {@code dependencies} of names): as every listed
   * property is written, it holds where each name it requires is listed too.
   */
  private static void dependentRequired(JsonNode s, JsonNode props, String path) {
    for (String k : List.of("dependentRequired", "dependencies")) {
      for (Map.Entry<String, JsonNode> d : s.path(k).properties()) {
        if (!d.getValue().isArray()) {
          throw unsupported(
              path + "/" + k + "/" + d.getKey(), k + " with a schema is not supported");
        }
        for (JsonNode name : d.getValue()) {
          if (props.has(d.getKey()) && !props.has(name.asText())) {
            throw unsupported(
                path + "/" + k + "/" + d.getKey(),
                "property "
                    + name.asText()
                    + " is required with "
                    + d.getKey()
                    + " but not listed");
          }
        }
      }
    }
  }

  private static void refuseCounts(JsonNode s, String path, String... keys) {
    for (String k : keys) {
      if (s.has(k)) {
        throw unsupported(
            path + "/" + k, k + " without properties or items listed is not supported");
      }
    }
  }

  int literals(List<JsonNode> values, String path) {
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

  private int ref(String ref, String path) {
    Integer known = refs.get(ref);
    if (known != null) {
      return known;
    }
    JsonNode target = definition(root, ref, path);
    // A placeholder first, so that a definition may refer to itself; then the definition's
    // node stands in its place.
    int alias = add(ANY_OF);
    refs.put(ref, alias);
    int body = compile(target, ref);
    nodes.set(alias, nodes.get(body));
    return alias;
  }

  /** The schema {@code ref} (at {@code path}) names in {@code root}'s $defs or definitions. */
  static JsonNode definition(JsonNode root, String ref, String path) {
    String defs =
        ref.startsWith("#/$defs/")
            ? "$defs"
            : ref.startsWith("#/definitions/") ? "definitions" : null;
    if (defs == null) {
      throw unsupported(path + "/$ref", "only #/$defs/... and #/definitions/... are supported");
    }
    JsonNode target = root.path(defs).get(ref.substring(defs.length() + 3));
    if (target == null) {
      throw unsupported(path + "/$ref", ref + " is not defined");
    }
    return target;
  }

  int add(int kind) {
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

  static IllegalArgumentException unsupported(String path, String what) {
    return new IllegalArgumentException("json_schema at " + path + ": " + what);
  }
}
