package io.flinfer.runtime.grammar;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
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
 * properties makes a map, whose keys the model writes), {@code minProperties}/{@code maxProperties}
 * that the listed properties meet, {@code items}, {@code prefixItems} (and the drafts' array of
 * {@code items} with {@code additionalItems}) for tuples, {@code minItems}, {@code maxItems},
 * {@code uniqueItems} on items of literals, growing strings and unbounded integers ({@link
 * WrittenItems}), {@code minLength} and {@code maxLength} (in characters), {@code minimum}, {@code
 * maximum}, {@code exclusiveMinimum}, {@code exclusiveMaximum} and {@code multipleOf} on integers
 * and numbers ({@link DecimalBounds}), {@code pattern} and {@code format} on strings ({@link
 * StringPattern}), OpenAPI's number formats (annotations), {@code enum} and {@code const} (of the
 * {@code type} beside them), {@code anyOf} and {@code oneOf} ( {@link Unions}), {@code allOf}
 * ({@link AllOfMerge}), {@code $ref} into {@code $defs} or {@code definitions} (recursion
 * included), free values ({@code {}}, {@code true}, an object that lists no properties, an array
 * without items), and the annotations ({@code title}, {@code description}, {@code default}, ...).
 * {@link SchemaCompiler} makes the nodes.
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
  static final int KEYED = 10; // objects told apart by the name of the property written first

  /** The most values an enum may list (a state keeps one bit per value still possible). */
  public static final int MAX_ENUM = 64;

  static final Set<String> ANNOTATIONS =
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
  static final Set<String> KEYWORDS =
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
          "propertyNames",
          "patternProperties",
          "dependentRequired",
          "dependencies",
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
  static final int[] VALUE_STARTS = {
    '{', '[', '"', 't', 'f', 'n', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9'
  };

  /** OpenAPI's number formats, annotations that say nothing a JSON value must keep. */
  static final Set<String> NUMBER_FORMATS = Set.of("int32", "int64", "float", "double");

  /** The bounds of integers and numbers ({@link DecimalBounds}). */
  static final Set<String> BOUNDS =
      Set.of("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf");

  static final ObjectMapper JSON = new ObjectMapper();

  /** One node: its kind and what that kind needs. */
  static final class Node {
    int kind;
    byte[][] keys; // OBJECT: each property's key as JSON text, quotes included
    int[] values; // OBJECT: each property's node
    int[] prefixItems; // ARRAY: the nodes of its first items, one each
    int item = -1; // ARRAY: each later item's node (-1: none is written); MAP: each value's;
    // KEYED: the object without properties, written {}, or -1
    int minItems;
    int maxItems = Integer.MAX_VALUE;
    boolean uniqueItems; // ARRAY: no literal (item) value twice; MAP: no literal key twice
    int keyNode = -1; // MAP: what its keys are (propertyNames), or -1: any
    byte[][] literals; // LITERALS: each value as JSON text
    int[] alternatives; // ANY_OF; ARRAY: a union's arrays, or null
    int[]
        byFirstByte; // ANY_OF: the alternative a first byte picks (ARRAY: its first item's), or -1
    int[] tagged; // TAGGED: the object each of the first property's values picks; KEYED: each key's
    DecimalBounds bounds; // INTEGER, NUMBER: the bounds, or null
    int minLength; // STRING: the fewest characters
    int maxLength = Integer.MAX_VALUE; // STRING: the most characters
    StringPattern pattern; // STRING: what pattern and format allow, or null
    int opens; // ANY: the byte the value must start with ('{', '['), or 0 for any value
  }

  private final Node[] nodes;
  private final int root;
  private final boolean hashesItems;

  private JsonSchemaGrammar(Node[] nodes, int root) {
    this.nodes = nodes;
    this.root = root;
    boolean hashes = false;
    for (Node n : nodes) {
      hashes |=
          n.kind == ARRAY
              && n.uniqueItems
              && (nodes[n.item].kind == STRING || nodes[n.item].kind == INTEGER);
    }
    this.hashesItems = hashes;
  }

  /**
   * Whether some array keeps its string or integer items apart ({@link WrittenItems}): states of
   * other schemas skip that bookkeeping, as masks copy a state for every token they try.
   */
  boolean hashesItems() {
    return hashesItems;
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
    SchemaCompiler c = new SchemaCompiler(root);
    int id = c.compile(root, "#");
    FiniteValues.check(c.nodes, id, c.refs);
    int kind = c.nodes.get(id).kind;
    boolean container = kind == ANY && c.nodes.get(id).opens != 0;
    if (kind != OBJECT
        && kind != TAGGED
        && kind != KEYED
        && kind != MAP
        && kind != ARRAY
        && !container) {
      // A bare number would not know where it ends; a string or literal is no document.
      throw new IllegalArgumentException("json_schema: the root must be an object or an array");
    }
    return new JsonSchemaGrammar(c.nodes.toArray(Node[]::new), id);
  }

  /** A new state at the start of an output this schema describes. */
  public SchemaPrefix start() {
    return new SchemaPrefix(this);
  }
}
