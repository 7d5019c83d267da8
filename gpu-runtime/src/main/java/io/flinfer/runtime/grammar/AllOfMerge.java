package io.flinfer.runtime.grammar;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;

/**
 * An {@code allOf} as the one schema it amounts to, where its schemas (and the keywords beside it)
 * constrain apart: a value is valid against all of them exactly when it is valid against their
 * keywords put together, as long as no keyword comes from two of them with two values and no
 * keyword reads another from a different schema ({@code additionalProperties} reads {@code
 * properties}, {@code items} reads {@code prefixItems}). {@code properties} of several schemas are
 * one list when no name comes twice (OpenAPI's composition of a base object and its extension),
 * {@code required} is their union, and a {@code $ref} member is its definition. Anything else is
 * refused, naming the keyword.
 */
final class AllOfMerge {
  /** Keywords that read their siblings: each must come from the schema that gives those. */
  private static final Map<String, String> READS =
      Map.of(
          "additionalProperties", "properties",
          "items", "prefixItems",
          "additionalItems", "items");

  private static final Set<String> SKIPPED =
      Set.of("title", "description", "default", "examples", "$comment", "$defs", "definitions");

  private AllOfMerge() {}

  /**
   * The schema {@code s} (holding {@code allOf}, at {@code path}) amounts to.
   *
   * @throws IllegalArgumentException naming what cannot be put together
   */
  static ObjectNode merge(JsonNode s, JsonNode root, String path) {
    JsonNode all = s.get("allOf");
    if (!all.isArray() || all.isEmpty()) {
      throw SchemaCompiler.unsupported(
          path + "/allOf", "allOf must be a non-empty array of schemas");
    }
    ObjectNode merged = JsonNodeFactory.instance.objectNode();
    Map<String, Integer> from = new HashMap<>(); // keyword (or "properties/NAME") -> member
    add(merged, from, s, -1, path);
    for (int i = 0; i < all.size(); i++) {
      add(merged, from, resolved(all.get(i), root, path + "/allOf/" + i), i, path + "/allOf/" + i);
    }
    for (Map.Entry<String, String> r : READS.entrySet()) {
      Integer reader = from.get(r.getKey());
      if (reader == null) {
        continue;
      }
      for (Map.Entry<String, Integer> e : from.entrySet()) {
        if (e.getKey().startsWith(r.getValue()) && !e.getValue().equals(reader)) {
          throw SchemaCompiler.unsupported(
              path + "/allOf",
              r.getKey() + " and " + r.getValue() + " from two schemas are not supported");
        }
      }
    }
    return merged;
  }

  /** A member that is a {@code $ref} (with annotations) as its definition. */
  private static JsonNode resolved(JsonNode m, JsonNode root, String path) {
    if (!m.isObject()) {
      throw SchemaCompiler.unsupported(path, "a schema must be an object");
    }
    JsonNode ref = m.get("$ref");
    if (ref == null) {
      return m;
    }
    JsonNode target = SchemaCompiler.definition(root, ref.asText(), path);
    for (Iterator<String> it = m.fieldNames(); it.hasNext(); ) {
      String k = it.next();
      if (!k.equals("$ref") && !SKIPPED.contains(k)) {
        throw SchemaCompiler.unsupported(path, "$ref beside other keywords is not supported");
      }
    }
    return target;
  }

  private static void add(
      ObjectNode merged, Map<String, Integer> from, JsonNode m, int member, String path) {
    for (Iterator<Map.Entry<String, JsonNode>> it = m.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      String k = e.getKey();
      JsonNode v = e.getValue();
      if (k.equals("allOf") && member < 0 || SKIPPED.contains(k)) {
        continue;
      }
      if (k.equals("allOf") || k.equals("$ref")) {
        throw SchemaCompiler.unsupported(path + "/" + k, k + " inside allOf is not supported");
      }
      if (k.equals("properties") && v.isObject()) {
        ObjectNode props =
            merged.has("properties")
                ? (ObjectNode) merged.get("properties")
                : merged.putObject("properties");
        for (Iterator<Map.Entry<String, JsonNode>> p = v.fields(); p.hasNext(); ) {
          Map.Entry<String, JsonNode> prop = p.next();
          if (props.has(prop.getKey())) {
            throw SchemaCompiler.unsupported(
                path + "/properties/" + prop.getKey(),
                "property " + prop.getKey() + " in two schemas of allOf is not supported");
          }
          props.set(prop.getKey(), prop.getValue());
          from.put("properties/" + prop.getKey(), member);
        }
        from.putIfAbsent("properties", member);
      } else if (k.equals("required") && v.isArray()) {
        ArrayNode req =
            merged.has("required")
                ? (ArrayNode) merged.get("required")
                : merged.putArray("required");
        v.forEach(
            r -> {
              if (!contains(req, r)) {
                req.add(r);
              }
            });
      } else if (merged.has(k) && !merged.get(k).equals(v)) {
        throw SchemaCompiler.unsupported(
            path + "/" + k, k + " in two schemas of allOf with two values is not supported");
      } else {
        merged.set(k, v);
        from.putIfAbsent(k, member);
      }
    }
  }

  private static boolean contains(ArrayNode a, JsonNode v) {
    for (JsonNode x : a) {
      if (x.equals(v)) {
        return true;
      }
    }
    return false;
  }
}
