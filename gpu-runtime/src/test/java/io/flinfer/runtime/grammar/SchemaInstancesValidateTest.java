package io.flinfer.runtime.grammar;

import static org.assertj.core.api.Assertions.assertThat;

import com.networknt.schema.InputFormat;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SchemaRegistryConfig;
import com.networknt.schema.SpecificationVersion;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import net.jqwik.api.Assume;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.statistics.Statistics;

/**
 * What a schema's grammar lets a model write validates against the schema, as an independent
 * validator (networknt's, JSON Schema 2020-12 and draft 7) reads it: random walks over the bytes
 * each state takes, through the keywords that constrain values (multiples, tuples, sets, unions
 * whose alternatives start alike, discriminated unions, property counts, bounds). The validator
 * tests a multiple in doubles, so multiples here are bounded to where doubles are exact; {@link
 * SchemaPrefixTest} checks them to 18 digits.
 */
class SchemaInstancesValidateTest {
  private static final SchemaRegistry VALIDATORS =
      SchemaRegistry.withDefaultDialect(
          SpecificationVersion.DRAFT_2020_12,
          // Formats asserted, not only annotated: the strings written must be of them.
          b ->
              b.schemaRegistryConfig(
                  SchemaRegistryConfig.builder().formatAssertionsEnabled(true).build()));

  static final String[] SCHEMAS = {
    """
    {"type": "object", "properties": {
      "qty": {"type": "integer", "multipleOf": 3, "minimum": -20, "maximum": 40},
      "price": {"type": "number", "multipleOf": 0.25, "exclusiveMinimum": 0, "maximum": 100},
      "cents": {"type": "number", "multipleOf": 0.01, "minimum": -1e6, "maximum": 1e6},
      "odd": {"type": "integer", "multipleOf": 2.5, "minimum": -1e6, "maximum": 1e6},
      "week": {"type": "integer", "multipleOf": 7, "minimum": -1e6, "maximum": 1e6}}}
    """,
    """
    {"type": "object", "properties": {
      "at": {"type": "array", "prefixItems": [{"type": "number"}, {"type": "number"}],
             "minItems": 2, "maxItems": 2},
      "row": {"type": "array", "prefixItems": [{"type": "string", "maxLength": 5},
              {"type": "integer", "multipleOf": 5,
              "minimum": -1e6, "maximum": 1e6}], "items": {"type": "boolean"}, "maxItems": 4},
      "tags": {"type": "array", "items": {"enum": ["red", "green", "blue", null, 3]},
               "uniqueItems": true, "minItems": 1},
      "flags": {"type": "array", "items": {"type": "boolean"}, "uniqueItems": true}},
     "minProperties": 4, "maxProperties": 4}
    """,
    """
    {"$schema": "http://json-schema.org/draft-07/schema#", "type": "array",
     "items": [{"const": "v1"}, {"type": "integer", "minimum": 0}, {"type": "string",
               "maxLength": 3}],
     "additionalItems": {"type": "null"}, "maxItems": 5}
    """,
    """
    {"type": "object", "properties": {
      "n": {"anyOf": [{"type": "integer"}, {"type": "number"}]},
      "t": {"type": ["integer", "number", "null"]},
      "s": {"anyOf": [{"type": "string", "format": "date"}, {"type": "string"}]},
      "l": {"anyOf": [{"enum": ["a", 1, null]}, {"type": "string"}, {"type": "integer"}]},
      "b": {"anyOf": [{"type": "boolean"}, {"const": true}]}}}
    """,
    """
    {"type": "object", "properties": {
      "pets": {"type": "array", "maxItems": 3, "items": {
        "oneOf": [{"$ref": "#/$defs/Cat"}, {"$ref": "#/$defs/Dog"}],
        "discriminator": {"propertyName": "kind"}}},
      "favourite": {"$ref": "#/$defs/Cat"}},
     "$defs": {
      "Cat": {"type": "object", "properties": {"lives": {"type": "integer", "minimum": 0,
              "maximum": 9}, "kind": {"const": "cat"}}, "required": ["kind"]},
      "Dog": {"type": "object", "properties": {"name": {"type": "string", "maxLength": 8},
              "kind": {"enum": ["dog", "puppy"]}, "good": {"type": "boolean"}},
              "required": ["kind"]}}}
    """,
    """
    {"type": "object", "properties": {
      "item": {"allOf": [{"$ref": "#/$defs/Base"}, {"properties": {"price": {"type": "number",
               "multipleOf": 0.5, "minimum": 0, "maximum": 1e3}}, "required": ["price"]}]},
      "code": {"allOf": [{"type": "string"}, {"maxLength": 3}, {"pattern": "^[a-z]*$"}]}},
     "$defs": {"Base": {"type": "object", "properties": {"id": {"type": "integer"},
               "tags": {"type": "array", "items": {"enum": ["a", "b"]}, "uniqueItems": true}},
               "required": ["id"]}}}
    """,
    """
    {"type": "object", "properties": {
      "meta": {}, "opts": {"type": "object"}, "list": {"type": "array"},
      "closed": {"type": "object", "additionalProperties": false},
      "maybe": {"anyOf": [{"type": "object"}, {"type": "null"},
                {"type": "object", "properties": {"x": {"type": "integer"}}}]},
      "rows": {"type": "array", "maxItems": 3, "items": {"type": "object",
               "additionalProperties": true}},
      "anything": true,
      "langs": {"type": "object", "additionalProperties": {"type": "string", "maxLength": 4},
                "propertyNames": {"enum": ["en", "fr", "de"]}, "minProperties": 1},
      "ids": {"type": "object", "propertyNames": {"pattern": "^[a-z]{1,3}$"},
              "additionalProperties": {"type": "integer"}},
      "tagsByKey": {"type": "object", "propertyNames": {"maxLength": 2}},
      "typed": {"type": "string", "enum": ["a", 1, null, "b"]},
      "numeric": {"type": ["integer", "null"], "enum": [1.5, 2.0, null, "x", 3]}}}
    """,
    """
    {"type": "object", "properties": {
      "when": {"anyOf": [{"type": "string", "format": "date-time"},
               {"type": "string", "format": "date"}, {"const": "never"}, {"type": "null"}]},
      "code": {"type": "string", "pattern": "^[a-c]+d$", "minLength": 2, "maxLength": 4},
      "id": {"oneOf": [{"type": "string", "format": "uuid"},
             {"type": "string", "pattern": "^#[0-9]{1,3}$"}]},
      "word": {"anyOf": [{"type": "string", "pattern": "^x", "maxLength": 2},
               {"type": "string", "pattern": "^y", "minLength": 3, "maxLength": 5},
               {"enum": ["zzz", 4]}]},
      "scores": {"type": "object", "patternProperties": {"^[a-z]+$": {"type": "integer"}},
                 "propertyNames": {"maxLength": 3}},
      "headers": {"type": "object", "patternProperties": {"^x-": {}},
                  "additionalProperties": false},
      "pay": {"type": "object", "properties": {"card": {"type": "string", "maxLength": 4},
              "cvv": {"type": "string", "pattern": "^[0-9]{3}$"}},
              "dependentRequired": {"card": ["cvv"], "iban": ["bic"]}},
      "labels": {"type": "array", "items": {"type": "string"}, "uniqueItems": true},
      "took": {"type": "string", "format": "duration"},
      "pet": {"anyOf": [
        {"type": "object", "properties": {"name": {"type": "string", "maxLength": 5},
         "lives": {"type": "integer", "minimum": 0, "maximum": 9}},
         "required": ["name", "lives"], "additionalProperties": false},
        {"type": "object", "properties": {"name": {"type": "string", "maxLength": 5},
         "barks": {"type": "boolean"}}, "required": ["name", "barks"],
         "additionalProperties": false},
        {"type": "object", "properties": {"name": {"type": "string"}},
         "additionalProperties": false},
        {"type": "null"}]},
      "either": {"anyOf": [{"type": "array", "items": {"type": "integer"}, "uniqueItems": true},
                 {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 3},
                 {"type": "array", "items": {"type": "object", "properties": {
                   "k": {"type": "boolean"}}}, "maxItems": 2}]},
      "addr": {"type": "string", "format": "ipv6"},
      "ref": {"anyOf": [{"type": "string", "format": "json-pointer"},
              {"type": "string", "format": "uri-reference"}]},
      "ids": {"type": "array", "items": {"type": "integer"}, "uniqueItems": true,
              "minItems": 2}}}
    """,
  };

  /** These, and {@link SchemaPrefixTest}'s (every other construct). */
  private static final String[] ALL = {
    SCHEMAS[0],
    SCHEMAS[1],
    SCHEMAS[2],
    SCHEMAS[3],
    SCHEMAS[4],
    SCHEMAS[5],
    SCHEMAS[6],
    SCHEMAS[7],
    SchemaPrefixTest.SCHEMA,
    SchemaPrefixTest.CALLS,
    SchemaPrefixTest.BOUNDED
  };

  @Property(tries = 400)
  void everyValueWrittenValidates(
      @ForAll @IntRange(min = 0, max = 10) int which, @ForAll long seed) {
    String schema = ALL[which];
    String text = walk(JsonSchemaGrammar.compile(schema), new Random(seed));
    Statistics.label("walk ended").collect(text != null);
    Assume.that(text != null);
    assertThat(VALIDATORS.getSchema(schema).validate(text, InputFormat.JSON))
        .as("%s against %s", text, schema)
        .isEmpty();
  }

  /**
   * Random schemas of every supported construct, nested and combined: each one compiled (or refused
   * by name) writes only values that validate, and never meets a state without a next byte.
   */
  @Property(tries = 300)
  void randomSchemasWriteOnlyValuesThatValidate(@ForAll long seed) {
    Random r = new Random(seed);
    String schema = RandomSchemas.of(r);
    JsonSchemaGrammar g;
    try {
      g = JsonSchemaGrammar.compile(schema);
    } catch (IllegalArgumentException refused) {
      assertThat(refused.getMessage()).startsWith("json_schema");
      return;
    }
    for (int walk = 0; walk < 3; walk++) {
      String text = walk(g, new Random(r.nextLong()));
      if (text != null) {
        assertThat(VALIDATORS.getSchema(schema).validate(text, InputFormat.JSON))
            .as("%s against %s", text, schema)
            .isEmpty();
      }
    }
  }

  /**
   * A value written a byte at a time, each drawn from the bytes the state takes (ASCII; mostly ones
   * that close or separate, so that walks end), or null where it has not ended in 3,000.
   */
  static String walk(JsonSchemaGrammar g, Random r) {
    SchemaPrefix state = g.start();
    SchemaPrefix probe = g.start();
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    List<Integer> allowed = new ArrayList<>();
    List<Integer> closing = new ArrayList<>();
    for (int step = 0; step < 3_000 && !state.isComplete(); step++) {
      allowed.clear();
      closing.clear();
      for (int b = 0; b < 128; b++) {
        probe.copyFrom(state);
        if (probe.accept((byte) b)) {
          allowed.add(b);
          if ("\"]},".indexOf(b) >= 0) {
            closing.add(b);
          }
        }
      }
      assertThat(allowed).as("bytes after %s", out).isNotEmpty();
      List<Integer> pool = !closing.isEmpty() && r.nextInt(3) != 0 ? closing : allowed;
      int b = pool.get(r.nextInt(pool.size()));
      assertThat(state.accept((byte) b)).isTrue();
      out.write(b);
    }
    return state.isComplete() ? out.toString(StandardCharsets.UTF_8) : null;
  }
}
