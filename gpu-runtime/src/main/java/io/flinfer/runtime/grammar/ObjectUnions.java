package io.flinfer.runtime.grammar;

import static io.flinfer.runtime.grammar.JsonSchemaGrammar.KEYED;
import static io.flinfer.runtime.grammar.JsonSchemaGrammar.LITERALS;
import static io.flinfer.runtime.grammar.JsonSchemaGrammar.OBJECT;
import static io.flinfer.runtime.grammar.JsonSchemaGrammar.TAGGED;

import com.fasterxml.jackson.databind.JsonNode;
import io.flinfer.runtime.grammar.JsonSchemaGrammar.Node;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Objects of a union, which all start with a brace, told apart by what is written first: a property
 * they share whose literal values differ (a discriminated union, {@link JsonSchemaGrammar#TAGGED}),
 * or else, in an {@code anyOf}, a first property name of each its own ({@link
 * JsonSchemaGrammar#KEYED}: Pydantic's {@code Cat | Dog} without a discriminator). Every property
 * of an object is written, in any order JSON allows, so the property written first may be any of
 * its own.
 */
final class ObjectUnions {
  private final SchemaCompiler c;

  ObjectUnions(SchemaCompiler c) {
    this.c = c;
  }

  /** One node for {@code objects}; {@code exclusive}: a {@code oneOf}. */
  int of(List<Integer> objects, boolean exclusive, String path) {
    byte[] key = tellingKey(objects);
    if (key != null) {
      return tagged(objects, key, path);
    }
    if (exclusive) {
      // An object of one alternative may be valid for another too, whose other properties are
      // allowed: only a tag keeps a oneOf's objects apart.
      throw SchemaCompiler.unsupported(
          path,
          "object alternatives of a oneOf must share a property whose const or enum tells"
              + " them apart");
    }
    return keyed(objects, path);
  }

  /**
   * Objects each written with a property name of its own first: the name picks the object. Names
   * are matched to objects so that no two objects start with the same one (each object's listed
   * order preferred); an object without properties is written {@code {}}.
   */
  private int keyed(List<Integer> objects, String path) {
    if (objects.size() > JsonSchemaGrammar.MAX_ENUM) {
      throw SchemaCompiler.unsupported(
          path, "more than " + JsonSchemaGrammar.MAX_ENUM + " object alternatives");
    }
    int[] firstKey = distinctFirstKeys(objects, path);
    List<byte[]> keys = new ArrayList<>();
    List<Integer> picks = new ArrayList<>();
    int empty = -1;
    for (int i = 0; i < objects.size(); i++) {
      Node o = c.nodes.get(objects.get(i));
      if (o.keys.length == 0) {
        empty = empty < 0 ? objects.get(i) : empty;
        continue;
      }
      keys.add(o.keys[firstKey[i]]);
      picks.add(withKeyFirst(objects.get(i), o.keys[firstKey[i]]));
    }
    if (keys.isEmpty()) {
      return empty; // objects without properties only: {} is each of them
    }
    int id = c.add(KEYED);
    Node n = c.nodes.get(id);
    n.keys = keys.toArray(byte[][]::new);
    n.tagged = picks.stream().mapToInt(Integer::intValue).toArray();
    n.alternatives = objects.stream().mapToInt(Integer::intValue).toArray();
    n.item = empty;
    return id;
  }

  /**
   * For each object with properties, the index of the one it is written with first, no two alike: a
   * matching of objects to names by augmenting paths, each object trying its names in order.
   */
  private int[] distinctFirstKeys(List<Integer> objects, String path) {
    int[] firstKey = new int[objects.size()];
    Map<String, Integer> taken = new HashMap<>();
    for (int i = 0; i < objects.size(); i++) {
      if (c.nodes.get(objects.get(i)).keys.length > 0
          && !augment(objects, i, firstKey, taken, new HashSet<>())) {
        throw SchemaCompiler.unsupported(
            path,
            "object alternatives must share a property whose const or enum tells them apart, or"
                + " each have a property name to be written first that no other starts with");
      }
    }
    return firstKey;
  }

  /** Gives object {@code i} a name of its own, moving those that hold one on to another. */
  private boolean augment(
      List<Integer> objects, int i, int[] firstKey, Map<String, Integer> taken, Set<String> seen) {
    byte[][] keys = c.nodes.get(objects.get(i)).keys;
    for (int k = 0; k < keys.length; k++) {
      String name = new String(keys[k], StandardCharsets.UTF_8);
      if (!seen.add(name)) {
        continue;
      }
      Integer holder = taken.get(name);
      if (holder == null || augment(objects, holder, firstKey, taken, seen)) {
        taken.put(name, i);
        firstKey[i] = k;
        return true;
      }
    }
    return false;
  }

  /**
   * Objects that share a property whose values are literals (a {@code const} or {@code enum}), none
   * written as the start of another: a discriminated union. That property is written first (the
   * first such property of the first object, wherever it is listed; the order of an object's
   * properties says nothing about its validity), so the value written picks the object, whose other
   * properties follow in their order.
   */
  private int tagged(List<Integer> objects, byte[] key, String path) {
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

  /**
   * The key of the first property of the first object that every object has with literals, or null.
   */
  private byte[] tellingKey(List<Integer> objects) {
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
    return null;
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
}
