package io.flinfer.runtime.grammar;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.flinfer.runtime.gguf.GgufFile;
import io.flinfer.runtime.gguf.GgufTokenizers;
import io.flinfer.runtime.testing.SharedFiles;
import java.io.ByteArrayOutputStream;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.function.Predicate;
import net.jqwik.api.Assume;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import net.jqwik.api.constraints.StringLength;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class SchemaPrefixTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  /** A schema with every supported construct: nesting, arrays, enums, unions, recursion. */
  static final String SCHEMA =
      """
      {"type": "object", "title": "person",
       "properties": {
         "name": {"type": "string"},
         "age": {"type": "integer"},
         "height": {"type": "number", "description": "metres"},
         "pet": {"enum": ["cat", "dog", null, 7]},
         "alive": {"type": "boolean"},
         "nick": {"type": ["string", "null"]},
         "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 3},
         "boss": {"anyOf": [{"$ref": "#/$defs/node"}, {"type": "null"}]},
         "kind": {"const": "person"}
       },
       "required": ["name", "age"],
       "additionalProperties": false,
       "$defs": {"node": {"type": "object", "properties": {
         "id": {"type": "integer"},
         "children": {"type": "array", "items": {"$ref": "#/$defs/node"}, "maxItems": 2}}}}}
      """;

  private static final JsonSchemaGrammar GRAMMAR = JsonSchemaGrammar.compile(SCHEMA);

  private static int accepted(String text) {
    byte[] b = text.getBytes(StandardCharsets.UTF_8);
    SchemaPrefix p = GRAMMAR.start();
    for (int i = 0; i < b.length; i++) {
      if (!p.accept(b[i])) {
        return i;
      }
    }
    return b.length;
  }

  /**
   * Each case's schema ({@code c[0]}, between {@code before} and {@code after}) as property "a" of
   * an object is refused with a message holding {@code c[1]}.
   */
  private static void assertRefusedAsProperty(String[][] cases, String before, String after) {
    for (String[] c : cases) {
      assertThatThrownBy(
              () ->
                  JsonSchemaGrammar.compile(
                      "{\"type\": \"object\", \"properties\": {\"a\": "
                          + before
                          + c[0]
                          + after
                          + "}}"))
          .as(c[0])
          .hasMessageContaining(c[1]);
    }
  }

  /** Whether {@code g} takes {@code text} as a whole value. */
  static boolean whole(JsonSchemaGrammar g, String text) {
    byte[] b = text.getBytes(StandardCharsets.UTF_8);
    SchemaPrefix p = g.start();
    return p.accept(b, 0, b.length) && p.isComplete();
  }

  /** Whether {@code g} takes {@code text} as the start of a value. */
  static boolean prefix(JsonSchemaGrammar g, String text) {
    byte[] b = text.getBytes(StandardCharsets.UTF_8);
    return g.start().accept(b, 0, b.length);
  }

  private static boolean complete(String text) {
    byte[] b = text.getBytes(StandardCharsets.UTF_8);
    SchemaPrefix p = GRAMMAR.start();
    return p.accept(b, 0, b.length) && p.isComplete();
  }

  /** A random instance of {@link #SCHEMA}, every property present in the schema's order. */
  static ObjectNode instance(Random r, int depth) {
    JsonNodeFactory f = JsonNodeFactory.instance;
    ObjectNode o = f.objectNode();
    o.put("name", r.nextBoolean() ? "Ann \"A\" \u00e9\u65e5\ud83d\ude00\n" : "");
    o.put("age", r.nextInt(200) - 100);
    o.put("height", r.nextBoolean() ? r.nextDouble() * 1e6 : -r.nextInt(5));
    Object[] pets = {"cat", "dog", null, 7};
    Object pet = pets[r.nextInt(4)];
    o.set(
        "pet",
        pet == null
            ? f.nullNode()
            : pet instanceof Integer ? f.numberNode(7) : f.textNode((String) pet));
    o.put("alive", r.nextBoolean());
    o.set("nick", r.nextBoolean() ? f.nullNode() : f.textNode("n" + r.nextInt(9)));
    ArrayNode tags = o.putArray("tags");
    for (int i = 0; i < 1 + r.nextInt(3); i++) {
      tags.add("t" + i);
    }
    o.set("boss", r.nextBoolean() ? f.nullNode() : node(r, depth));
    o.put("kind", "person");
    return o;
  }

  private static ObjectNode node(Random r, int depth) {
    ObjectNode n = JsonNodeFactory.instance.objectNode();
    n.put("id", r.nextInt(1000));
    ArrayNode children = n.putArray("children");
    for (int i = 0; depth > 0 && i < r.nextInt(3); i++) {
      children.add(node(r, depth - 1));
    }
    return n;
  }

  @Property(tries = 200)
  void takesEveryInstanceWrittenCompactOrPretty(@ForAll long seed, @ForAll boolean pretty)
      throws Exception {
    ObjectMapper m = new ObjectMapper();
    if (pretty) {
      m.enable(SerializationFeature.INDENT_OUTPUT);
    }
    String text = m.writeValueAsString(instance(new Random(seed), 3));
    assertThat(accepted(text)).as(text).isEqualTo(text.getBytes(StandardCharsets.UTF_8).length);
    assertThat(complete(text)).as(text).isTrue();
  }

  @Test
  void refusesWhatTheSchemaDoesNot() throws Exception {
    String ok = JSON.writeValueAsString(instance(new Random(1), 1));
    assertThat(complete(ok)).isTrue();
    ObjectNode base = (ObjectNode) JSON.readTree(ok);
    List<ObjectNode> bad = new ArrayList<>();
    bad.add(base.deepCopy().put("age", 1.5)); // an integer with a fraction
    bad.add(base.deepCopy().put("age", "1")); // a string for an integer
    bad.add(base.deepCopy().put("pet", "cow")); // outside the enum
    bad.add(base.deepCopy().put("pet", 77));
    bad.add(base.deepCopy().put("alive", "true"));
    bad.add(base.deepCopy().put("kind", "robot"));
    ObjectNode noTags = base.deepCopy();
    noTags.putArray("tags");
    bad.add(noTags); // below minItems
    ObjectNode manyTags = base.deepCopy();
    manyTags.putArray("tags").add("a").add("b").add("c").add("d");
    bad.add(manyTags); // above maxItems
    ObjectNode missing = base.deepCopy();
    missing.remove("height");
    bad.add(missing); // every property is written
    ObjectNode extra = base.deepCopy();
    extra.put("extra", 1);
    bad.add(extra);
    for (ObjectNode b : bad) {
      String text = JSON.writeValueAsString(b);
      assertThat(complete(text)).as(text).isFalse();
    }
    // Keys in another order, and a second root value.
    ObjectNode reordered = JsonNodeFactory.instance.objectNode();
    reordered.set("age", base.get("age"));
    for (Map.Entry<String, JsonNode> e : base.properties()) {
      reordered.set(e.getKey(), e.getValue());
    }
    assertThat(complete(JSON.writeValueAsString(reordered))).isFalse();
    assertThat(accepted(ok + "{}")).isEqualTo(ok.getBytes(StandardCharsets.UTF_8).length);
    // JsonPrefix's whitespace limits hold here too.
    for (String head : new String[] {"{", "{\"name\":", "{\"name\":\"\",\"age\":1"}) {
      String run = head + " ".repeat(JsonPrefix.MAX_WHITESPACE + 1);
      assertThat(accepted(run)).as(head).isEqualTo(run.length() - 1);
    }
    assertThat(accepted("  {")).isEqualTo(JsonPrefix.MAX_LEADING_WHITESPACE);
  }

  /**
   * A recursion that every value must take again has no finite value: refused, naming the
   * definition, rather than begun and never ended; one that a value may leave is served.
   */
  @Test
  void aRecursionWithoutEndIsRefused() {
    String[][] endless = {
      {"{\"type\": \"array\", \"items\": {\"$ref\": \"#/$defs/n\"}, \"minItems\": 1}", "#/$defs/n"},
      {
        "{\"type\": \"object\", \"properties\": {\"next\": {\"$ref\": \"#/$defs/n\"}}}", "#/$defs/n"
      },
      {
        "{\"anyOf\": [{\"type\": \"object\", \"properties\": {\"a\": {\"$ref\":"
            + " \"#/$defs/n\"}}}, {\"type\": \"array\", \"prefixItems\": [{\"$ref\":"
            + " \"#/$defs/n\"}], \"minItems\": 1}]}",
        "#/$defs/n"
      },
    };
    for (String[] c : endless) {
      assertThatThrownBy(
              () ->
                  JsonSchemaGrammar.compile(
                      "{\"type\": \"object\", \"properties\": {\"a\": {\"$ref\": \"#/$defs/n\"}},"
                          + " \"$defs\": {\"n\": "
                          + c[0]
                          + "}}"))
          .as(c[0])
          .hasMessage(
              "json_schema at "
                  + c[1]
                  + ": no finite value matches it: each of its values"
                  + " must hold another without end");
    }
    JsonSchemaGrammar g =
        JsonSchemaGrammar.compile(
            "{\"type\": \"object\", \"properties\": {\"a\": {\"$ref\": \"#/$defs/n\"}},"
                + " \"$defs\": {\"n\": {\"anyOf\": [{\"type\": \"array\", \"items\": {\"$ref\":"
                + " \"#/$defs/n\"}, \"minItems\": 1}, {\"type\": \"integer\"}]}}}");
    assertThat(whole(g, "{\"a\": [[1], [[2, 3]]]}")).isTrue();
    assertThat(whole(g, "{\"a\": [[]]}")).isFalse();
  }

  @Test
  void compilingNamesWhatIsNotSupported() {
    assertThatThrownBy(() -> JsonSchemaGrammar.compile("{\"type\": \"string\"}"))
        .hasMessageContaining("root must be an object or an array");
    assertThatThrownBy(
            () ->
                JsonSchemaGrammar.compile(
                    "{\"type\": \"object\", \"properties\": {\"a\": {\"type\": \"integer\","
                        + " \"not\": {\"const\": 2}}}}"))
        .hasMessage("json_schema at #/properties/a/not: keyword not is not supported");
    assertThatThrownBy(
            () ->
                JsonSchemaGrammar.compile(
                    "{\"type\": \"object\", \"properties\": {\"a\": {\"anyOf\": [{\"type\":"
                        + " \"integer\"}, {\"type\": \"number\", \"maximum\": 9}]}}}"))
        .hasMessageContaining("start with the same character");
    assertThatThrownBy(
            () ->
                JsonSchemaGrammar.compile(
                    "{\"type\": \"object\", \"properties\": {\"a\": {\"enum\": [1, 12]}}}"))
        .hasMessageContaining("cannot be told apart");
    assertThatThrownBy(
            () -> JsonSchemaGrammar.compile("{\"type\": \"object\", \"required\": [\"x\"]}"))
        .hasMessageContaining("required property x is not in properties");
    assertThatThrownBy(() -> JsonSchemaGrammar.compile("{\"type\": \"object\", \"$ref\": 1"))
        .hasMessageStartingWith("json_schema is not JSON");
    assertThatThrownBy(
            () ->
                JsonSchemaGrammar.compile(
                    "{\"type\": \"object\", \"properties\": {\"a\": {\"$ref\":"
                        + " \"#/$defs/missing\"}}}"))
        .hasMessageContaining("#/$defs/missing is not defined");
  }

  /**
   * A random walk over a real vocabulary with each token drawn from the mask: the mask is exactly
   * the tokens that fit, and a completed walk is an instance that Jackson reads with the schema's
   * keys in order.
   */
  @ParameterizedTest
  @ValueSource(strings = {"llama3_1", "ggml-vocab-llama-spm"})
  void masksAreExactAndWalksEndInInstances(String vocab) throws Exception {
    Path gguf = SharedFiles.root().resolve("tokenizers").resolve(vocab + ".gguf");
    assumeTrue(Files.exists(gguf), "missing " + gguf);
    JsonVocabulary v = JsonVocabulary.of(GgufTokenizers.read(GgufFile.open(gguf)));
    long[] mask = new long[JsonVocabulary.words(v.size())];
    Random random = new Random(vocab.hashCode());
    int completed = 0;
    for (int walk = 0; walk < 4; walk++) {
      OutputConstraint c = new OutputConstraint(v, GRAMMAR.start());
      ByteArrayOutputStream text = new ByteArrayOutputStream();
      for (int step = 0; step < 400 && !c.isComplete(); step++) {
        int n = c.allowed(mask);
        if (step % 3 == 0) {
          assertThat(mask)
              .as("%s step %d", vocab, step)
              .isEqualTo(OutputConstraintTest.bruteForce(v, c.state()));
        }
        assertThat(n).isPositive();
        // Mostly tokens that close or start something, so that walks end.
        List<Integer> allowed = new ArrayList<>();
        List<Integer> structural = new ArrayList<>();
        for (int t = 0; t < v.size(); t++) {
          if ((mask[t >>> 6] & 1L << t) != 0) {
            allowed.add(t);
            byte[] b = v.bytes(t);
            if (b.length <= 2
                && new String(b, StandardCharsets.ISO_8859_1).matches(".*[\"\\]\\[{},:0-9].*")) {
              structural.add(t);
            }
          }
        }
        List<Integer> pool = random.nextInt(4) != 0 && !structural.isEmpty() ? structural : allowed;
        int t = pool.get(random.nextInt(pool.size()));
        assertThat(c.advance(t)).isTrue();
        text.write(v.bytes(t));
      }
      if (c.isComplete()) {
        completed++;
        JsonNode node = JSON.readTree(text.toString(StandardCharsets.UTF_8));
        List<String> keys = new ArrayList<>();
        node.fieldNames().forEachRemaining(keys::add);
        assertThat(keys)
            .containsExactly(
                "name", "age", "height", "pet", "alive", "nick", "tags", "boss", "kind");
        assertThat(node.get("age").isIntegralNumber()).isTrue();
        assertThat(node.get("tags").size()).isBetween(1, 3);
        assertThat(node.get("kind").asText()).isEqualTo("person");
      }
    }
    assertThat(completed).as("walks that closed their object").isPositive();
  }

  /** Function calls: objects told apart by their name, each with its own arguments. */
  static final String CALLS =
      """
      {"type": "object", "properties": {"calls": {"type": "array", "minItems": 1, "items": {
        "anyOf": [
          {"type": "object", "properties": {"name": {"const": "add"}, "arguments": {"type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}}}},
          {"type": "object", "properties": {"name": {"const": "add_all"}, "arguments": {"type": "object",
            "properties": {"xs": {"type": "array", "items": {"type": "number"}}}}}},
          {"type": "object", "properties": {"name": {"enum": ["lamp", "light"]}, "arguments": {"type": "object",
            "properties": {"on": {"type": "boolean"}}}}},
          {"type": "null"}
        ]}}}}
      """;

  @Test
  void objectsToldApartByTheirFirstPropertyEachWriteTheirOwnRest() {
    JsonSchemaGrammar calls = JsonSchemaGrammar.compile(CALLS);
    Predicate<String> complete =
        text -> {
          byte[] b = text.getBytes(StandardCharsets.UTF_8);
          SchemaPrefix p = calls.start();
          return p.accept(b, 0, b.length) && p.isComplete();
        };
    assertThat(
            complete.test(
                "{\"calls\": [{\"name\": \"add\", \"arguments\": {\"a\": 1, \"b\": -2}},"
                    + " {\"name\": \"add_all\", \"arguments\": {\"xs\": [1.5]}}, null,"
                    + " {\"name\": \"light\", \"arguments\": {\"on\": true}}]}"))
        .isTrue();
    for (String wrong :
        new String[] {
          "{\"calls\": [{\"name\": \"add\", \"arguments\": {\"xs\": [1]}}]}",
          "{\"calls\": [{\"name\": \"add_all\", \"arguments\": {\"a\": 1, \"b\": 2}}]}",
          "{\"calls\": [{\"name\": \"lamp\", \"arguments\": {\"a\": 1, \"b\": 2}}]}",
          "{\"calls\": [{\"name\": \"sub\", \"arguments\": {}}]}",
          "{\"calls\": [{\"arguments\": {}, \"name\": \"add\"}]}"
        }) {
      assertThat(complete.test(wrong)).as(wrong).isFalse();
    }
    assertThatThrownBy(
            () ->
                JsonSchemaGrammar.compile(
                    "{\"type\": \"object\", \"properties\": {\"a\": {\"anyOf\": [{\"type\":"
                        + " \"object\", \"properties\": {\"k\": {\"type\": \"string\"}}},"
                        + " {\"type\": \"object\", \"properties\": {\"k\": {\"const\": 1}}}]}}}"))
        .hasMessage(
            "json_schema at #/properties/a: object alternatives must share a property whose const"
                + " or enum tells them apart, or each have a property name to be written first that"
                + " no other starts with");
    assertThatThrownBy(
            () ->
                JsonSchemaGrammar.compile(
                    "{\"type\": \"object\", \"properties\": {\"a\": {\"anyOf\": [{\"type\":"
                        + " \"object\", \"properties\": {\"k\": {\"const\": \"x\"}}},"
                        + " {\"type\": \"object\", \"properties\": {\"k\": {\"const\": \"x\"}}}]}}}"))
        .hasMessageContaining("cannot be told apart");
  }

  /**
   * Bounded, patterned and formatted strings, bounded integers and multiples, a tuple, a set, a
   * free value.
   */
  static final String BOUNDED =
      """
      {"type": "object", "properties": {
        "point": {"type": "array", "prefixItems": [{"type": "integer"}, {"enum": ["x", "y"]}],
          "items": false},
        "meta": {},
        "langs": {"type": "object", "propertyNames": {"enum": ["en", "fr"]},
                  "additionalProperties": {"type": "integer"}},
        "set": {"type": "array", "items": {"enum": ["x", "y", "z"]}, "uniqueItems": true},
        "even": {"type": "integer", "multipleOf": 2, "maximum": 100},
        "price": {"type": "number", "minimum": 0, "multipleOf": 0.25},
        "counts": {"type": "object", "additionalProperties": {"type": "integer", "minimum": 0}},
        "score": {"type": "number", "minimum": 0, "exclusiveMaximum": 1},
        "tag": {"type": "string", "pattern": "^[a-z]{2,4}( [0-9]+)?$"},
        "day": {"type": "string", "format": "date"},
        "title": {"type": "string", "minLength": 1, "maxLength": 20},
        "code": {"type": "string", "minLength": 2, "maxLength": 3},
        "age": {"type": "integer", "minimum": 18, "exclusiveMaximum": 130},
        "delta": {"type": "integer", "minimum": -5, "maximum": 5},
        "note": {"type": "string", "maxLength": 0}}}
      """;

  /** The exact-mask walk over the Llama 3 vocabulary, for a tagged union and for bounds. */
  @ParameterizedTest
  @ValueSource(strings = {"CALLS", "BOUNDED"})
  void masksOfTaggedUnionsAndBoundsAreExact(String which) throws Exception {
    JsonVocabulary v = llama3();
    JsonSchemaGrammar calls = JsonSchemaGrammar.compile(which.equals("CALLS") ? CALLS : BOUNDED);
    long[] mask = new long[JsonVocabulary.words(v.size())];
    Random random = new Random(7);
    for (int walk = 0; walk < 3; walk++) {
      OutputConstraint c = new OutputConstraint(v, calls.start());
      StringBuilder text = new StringBuilder();
      for (int step = 0; step < 60 && !c.isComplete(); step++) {
        c.allowed(mask);
        assertThat(mask)
            .as("step %d after %s", step, text)
            .isEqualTo(OutputConstraintTest.bruteForce(v, c.state()));
        List<Integer> allowed = new ArrayList<>();
        for (int t = 0; t < v.size(); t++) {
          if ((mask[t >>> 6] & 1L << t) != 0) {
            allowed.add(t);
          }
        }
        assertThat(allowed).as("tokens after %s", text).isNotEmpty();
        int t = allowed.get(random.nextInt(allowed.size()));
        assertThat(c.advance(t)).isTrue();
        text.append(new String(v.bytes(t), StandardCharsets.UTF_8));
      }
    }
  }

  /** The Llama 3 vocabulary; the test is skipped without it. */
  private static JsonVocabulary llama3() throws Exception {
    Path gguf = SharedFiles.root().resolve("tokenizers/llama3_1.gguf");
    assumeTrue(Files.exists(gguf), "missing " + gguf);
    return JsonVocabulary.of(GgufTokenizers.read(GgufFile.open(gguf)));
  }

  /** The mask after {@code text} into {@code mask}, asserted equal to the token-by-token check. */
  private static void exactMask(JsonVocabulary v, JsonSchemaGrammar g, String text, long[] mask) {
    SchemaPrefix state = g.start();
    byte[] b = text.getBytes(StandardCharsets.UTF_8);
    assertThat(state.accept(b, 0, b.length)).as(text).isTrue();
    OutputConstraint c = new OutputConstraint(v, state);
    c.allowed(mask);
    assertThat(mask).as(text).isEqualTo(OutputConstraintTest.bruteForce(v, c.state()));
  }

  /** Masks over the Llama 3 vocabulary where a first property name picks the object. */
  @Test
  void masksOfObjectsToldApartByAPropertyNameAreExact() throws Exception {
    JsonVocabulary v = llama3();
    JsonSchemaGrammar g =
        JsonSchemaGrammar.compile(
            """
            {"type": "object", "properties": {"pet": {"anyOf": [
              {"type": "object", "properties": {"name": {"type": "string"}, "lives": {"type": "integer"}}},
              {"type": "object", "properties": {"name": {"type": "string"}, "barks": {"type": "boolean"}}},
              {"type": "object", "properties": {"name": {"type": "string"}}},
              {"type": "object", "properties": {}}]}}}""");
    long[] mask = new long[JsonVocabulary.words(v.size())];
    for (String text :
        List.of(
            "{\"pet\": ", "{\"pet\": {", "{\"pet\": {\"", "{\"pet\": {\"na", "{\"pet\": {\"l")) {
      exactMask(v, g, text, mask);
    }
    assertThat(whole(g, "{\"pet\": {\"lives\": 9, \"name\": \"Tom\"}}")).isTrue();
    assertThat(whole(g, "{\"pet\": {\"barks\": true, \"name\": \"Rex\"}}")).isTrue();
    assertThat(whole(g, "{\"pet\": {\"name\": \"Tweety\"}}")).isTrue();
    assertThat(whole(g, "{\"pet\": {}}")).isTrue();
    assertThat(prefix(g, "{\"pet\": {\"lives\": 9, \"barks")).isFalse();
  }

  /**
   * Masks over the Llama 3 vocabulary inside unique strings and integers equal the token-by-token
   * check, and leave out exactly the tokens that would end an item written before.
   */
  @Test
  void masksOfUniqueItemsAreExact() throws Exception {
    JsonVocabulary v = llama3();
    JsonSchemaGrammar g =
        JsonSchemaGrammar.compile(
            """
            {"type": "object", "properties": {
              "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": true},
              "ids": {"type": "array", "items": {"type": "integer"}, "uniqueItems": true}}}""");
    long[] mask = new long[JsonVocabulary.words(v.size())];
    for (String text :
        List.of(
            "{\"tags\": [\"ab\", \"",
            "{\"tags\": [\"ab\", \"ab",
            "{\"tags\": [\"ab\", \"\", \"",
            "{\"tags\": [], \"ids\": [12, 0, ",
            "{\"tags\": [], \"ids\": [12, 0, 12")) {
      exactMask(v, g, text, mask);
      int refused = 0;
      for (int t = 0; t < v.size(); t++) {
        String piece = new String(v.bytes(t), StandardCharsets.UTF_8);
        boolean repeats =
            (text.endsWith("\"ab") || text.endsWith("\"\", \"")) && piece.startsWith("\"")
                || text.endsWith(", 12") && piece.matches("[],].*")
                || text.endsWith(", ") && piece.startsWith("0");
        if (repeats) {
          refused++;
          assertThat(mask[t >>> 6] & 1L << t).as("%s then %s", text, piece).isZero();
        }
      }
      if (!text.endsWith("[\"ab\", \"")) {
        assertThat(refused).as("tokens that repeat an item after %s", text).isPositive();
      }
    }
  }

  /**
   * A bounded integer: a prefix is taken exactly when some integer within the bounds starts with
   * it, and a whole one exactly when it is within them.
   */
  @Property(tries = 300)
  void boundedIntegersTakeExactlyThePrefixesOfIntegersWithinTheirBounds(
      @ForAll @IntRange(min = -3000, max = 3000) int a,
      @ForAll @IntRange(min = 0, max = 3000) int width,
      @ForAll @IntRange(min = -99999, max = 99999) int v,
      @ForAll boolean exclusive) {
    int lo = a;
    int hi = a + width;
    String bounds =
        exclusive
            ? "\"exclusiveMinimum\": " + (lo - 1) + ", \"exclusiveMaximum\": " + (hi + 1)
            : "\"minimum\": " + (lo - 0.5) + ", \"maximum\": " + (hi + 0.5);
    JsonSchemaGrammar g =
        JsonSchemaGrammar.compile(
            "{\"type\": \"object\", \"properties\": {\"n\": {\"type\": \"integer\", "
                + bounds
                + "}}}");
    String text = String.valueOf(v);
    for (int end = 1; end <= text.length(); end++) {
      String prefix = text.substring(0, end);
      // JSON writes zero as -0 too.
      boolean possible = lo <= 0 && hi >= 0 && "-0".startsWith(prefix);
      for (int w = lo; w <= hi && !possible; w++) {
        possible = String.valueOf(w).startsWith(prefix);
      }
      assertThat(prefix(g, "{\"n\":" + prefix))
          .as("%s in [%d, %d]", prefix, lo, hi)
          .isEqualTo(possible);
    }
    assertThat(whole(g, "{\"n\":" + text + "}"))
        .as("%d in [%d, %d]", v, lo, hi)
        .isEqualTo(v >= lo && v <= hi);
  }

  /**
   * {@code multipleOf} on an integer, with bounds or without, by a whole or a fractional step (1.5:
   * the multiples of 3): a prefix is taken exactly when some multiple within the bounds starts with
   * it, and a whole one exactly when it is one.
   */
  @Property(tries = 300)
  void integersTakeExactlyThePrefixesOfMultiplesWithinTheirBounds(
      @ForAll @IntRange(min = -3000, max = 3000) int a,
      @ForAll @IntRange(min = 0, max = 3000) int width,
      @ForAll @IntRange(min = 1, max = 40) int m,
      @ForAll boolean half,
      @ForAll boolean bounded,
      @ForAll @IntRange(min = -99999, max = 99999) int v) {
    BigDecimal multiple = BigDecimal.valueOf(m).add(half ? new BigDecimal("0.5") : BigDecimal.ZERO);
    long lo = bounded ? a : Long.MIN_VALUE;
    long hi = bounded ? a + width : Long.MAX_VALUE;
    Predicate<Long> multipleWithin =
        w -> w >= lo && w <= hi && BigDecimal.valueOf(w).remainder(multiple).signum() == 0;
    // With bounds, some multiple within them must exist; otherwise compiling refuses the schema.
    boolean any = !bounded;
    for (long w = lo; bounded && w <= hi && !any; w++) {
      any = multipleWithin.test(w);
    }
    Assume.that(any);
    JsonSchemaGrammar g =
        JsonSchemaGrammar.compile(
            "{\"type\": \"object\", \"properties\": {\"n\": {\"type\": \"integer\","
                + (bounded ? " \"minimum\": " + lo + ", \"maximum\": " + hi + "," : "")
                + " \"multipleOf\": "
                + multiple.toPlainString()
                + "}}}");
    String text = String.valueOf(v);
    for (int end = 1; end <= text.length(); end++) {
      String prefix = text.substring(0, end);
      boolean possible;
      if (bounded) {
        possible = multipleWithin.test(0L) && "-0".startsWith(prefix);
        for (long w = lo; w <= hi && !possible; w++) {
          possible = multipleWithin.test(w) && String.valueOf(w).startsWith(prefix);
        }
      } else {
        // Unbounded, digits can always be added until the value is a multiple; 0 is one.
        possible = true;
      }
      assertThat(prefix(g, "{\"n\":" + prefix))
          .as("%s, multiple of %s in [%d, %d]", prefix, multiple, lo, hi)
          .isEqualTo(possible);
    }
    assertThat(whole(g, "{\"n\":" + text + "}"))
        .as("%d, multiple of %s in [%d, %d]", v, multiple, lo, hi)
        .isEqualTo(multipleWithin.test((long) v));
  }

  /**
   * A tuple: an array is taken exactly when its first items are of {@code prefixItems}' schemas in
   * turn (an integer, a string, "a" or "b"), the rest of the schema for the rest (booleans, or none
   * where it is false or absent), and its length within minItems and maxItems. Drafts before
   * 2020-12 write the same tuple as an array of items with additionalItems. The arrays are of the
   * tuple's kinds, with one item of another kind at {@code wrongAt} where that is within them.
   */
  @Property(tries = 300)
  void tuplesTakeExactlyTheirItemsInTurn(
      @ForAll @IntRange(min = 0, max = 6) int length,
      @ForAll @IntRange(min = -3, max = 5) int wrongAt,
      @ForAll @IntRange(min = 0, max = 2) int rest,
      @ForAll @IntRange(min = 0, max = 4) int minItems,
      @ForAll @IntRange(min = 0, max = 3) int extra,
      @ForAll boolean draft7) {
    int maxItems = minItems + extra;
    String[] tuple = {
      "{\"type\": \"integer\"}", "{\"type\": \"string\"}", "{\"enum\": [\"a\", \"b\"]}"
    };
    String restSchema = new String[] {null, "false", "{\"type\": \"boolean\"}"}[rest];
    int most = rest == 2 ? maxItems : Math.min(maxItems, tuple.length);
    String schema =
        "{\"type\": \"array\", "
            + (draft7 ? "\"items\": [" : "\"prefixItems\": [")
            + String.join(", ", tuple)
            + "]"
            + (restSchema == null
                ? ""
                : (draft7 ? ", \"additionalItems\": " : ", \"items\": ") + restSchema)
            + ", \"minItems\": "
            + minItems
            + ", \"maxItems\": "
            + maxItems
            + "}";
    if (minItems > most) {
      assertThatThrownBy(() -> JsonSchemaGrammar.compile(schema))
          .as(schema)
          .hasMessageContaining("minItems needs more items than prefixItems has");
      return;
    }
    Object[] right = {3, "s", "b"};
    Object[] wrong = {"3", 3, "c"};
    List<Object> items = new ArrayList<>();
    for (int i = 0; i < length; i++) {
      items.add(i < 3 ? (i == wrongAt ? wrong[i] : right[i]) : i == wrongAt ? (Object) 4 : true);
    }
    boolean valid = length >= minItems && length <= most && (wrongAt < 0 || wrongAt >= length);
    String text = JSON.valueToTree(items).toString();
    byte[] b = text.getBytes(StandardCharsets.UTF_8);
    SchemaPrefix p = JsonSchemaGrammar.compile(schema).start();
    assertThat(p.accept(b, 0, b.length) && p.isComplete())
        .as("%s: %s", schema, text)
        .isEqualTo(valid);
  }

  /**
   * A model as Pydantic writes one with a {@code tuple[float, float]} field: its tuple and its
   * count of properties (all written) are kept.
   */
  @Test
  void aPydanticTupleFieldIsWrittenAsItsTwoNumbers() {
    JsonSchemaGrammar g =
        JsonSchemaGrammar.compile(
            "{\"title\": \"Place\", \"type\": \"object\", \"properties\": {\"name\":"
                + " {\"type\": \"string\"}, \"at\": {\"type\": \"array\", \"maxItems\": 2,"
                + " \"minItems\": 2, \"prefixItems\": [{\"type\": \"number\"}, {\"type\":"
                + " \"number\"}]}}, \"required\": [\"name\", \"at\"], \"minProperties\": 2,"
                + " \"maxProperties\": 2}");
    assertThat(whole(g, "{\"name\": \"Oslo\", \"at\": [59.9, 10.75]}")).isTrue();
    for (String bad : List.of("[59.9]", "[59.9, 10.75, 1]", "[\"59.9\", 10.75]")) {
      assertThat(whole(g, "{\"name\": \"Oslo\", \"at\": " + bad + "}")).as(bad).isFalse();
    }
  }

  /**
   * Unions whose alternatives start alike, where one takes every value of the others (Pydantic's
   * {@code int | float}, {@code date | str}, {@code Literal["a"] | str}, {@code bool |
   * Literal[True]}): every value of any alternative is taken, and nothing else.
   */
  @Test
  void unionsWhereOneAlternativeTakesTheOthersValuesAreThatAlternative() {
    String[][] cases = {
      // schema, values taken, values refused
      {
        "{\"anyOf\": [{\"type\": \"integer\"}, {\"type\": \"number\"}]}",
        "3|3.5|-1e5|0",
        "\"3\"|true"
      },
      {"{\"type\": [\"integer\", \"number\", \"null\"]}", "7|-0.25|null", "\"x\""},
      {
        "{\"anyOf\": [{\"type\": \"string\", \"format\": \"date\"}, {\"type\": \"string\"}]}",
        "\"2020-01-31\"|\"soon\"|\"\"",
        "5|null"
      },
      {
        "{\"anyOf\": [{\"enum\": [\"a\", 1, null]}, {\"type\": \"string\"}]}",
        "\"a\"|\"zz\"|1|null",
        "2|true"
      },
      {"{\"anyOf\": [{\"type\": \"boolean\"}, {\"const\": true}]}", "true|false", "null|1"},
      {
        "{\"anyOf\": [{\"const\": 1}, {\"type\": \"number\"}, {\"const\": \"x\"}]}",
        "1|1.5|\"x\"",
        "\"y\""
      },
      {
        "{\"anyOf\": [{\"type\": \"integer\", \"minimum\": 0}, {\"type\": \"number\"},"
            + " {\"type\": \"string\", \"maxLength\": 2}, {\"type\": \"string\"}]}",
        "-4|2.5|\"long text\"",
        "false"
      },
    };
    for (String[] c : cases) {
      JsonSchemaGrammar g =
          JsonSchemaGrammar.compile(
              "{\"type\": \"object\", \"properties\": {\"a\": " + c[0] + "}}");
      for (String v : c[1].split("\\|")) {
        assertThat(whole(g, "{\"a\": " + v + "}")).as("%s in %s", v, c[0]).isTrue();
      }
      for (String v : c[2].split("\\|")) {
        assertThat(whole(g, "{\"a\": " + v + "}")).as("%s in %s", v, c[0]).isFalse();
      }
    }
    // Neither takes all of the other's values, or a oneOf (3, "a" would be of both): refused.
    for (String union :
        List.of(
            "\"anyOf\": [{\"type\": \"integer\"}, {\"type\": \"number\", \"minimum\": 0}]",
            "\"oneOf\": [{\"type\": \"string\", \"pattern\": \"^a\"}, {\"type\": \"string\","
                + " \"maxLength\": 3}]",
            "\"oneOf\": [{\"type\": \"integer\"}, {\"type\": \"number\"}]")) {
      assertThatThrownBy(
              () ->
                  JsonSchemaGrammar.compile(
                      "{\"type\": \"object\", \"properties\": {\"a\": {" + union + "}}}"))
          .as(union)
          .hasMessageContaining("start with the same character");
    }
  }

  /**
   * Objects without a tag in an anyOf (Pydantic's {@code Cat | Dog} without a discriminator): each
   * is written with a property name of its own first, which picks it; all its properties follow. An
   * object is taken exactly when it is one alternative's, its first property the one picked.
   */
  @Property(tries = 300)
  void objectsWithoutATagAreToldApartByTheirFirstPropertyName(
      @ForAll @Size(min = 2, max = 4)
          List<@Size(max = 3) Set<@IntRange(min = 0, max = 4) Integer>> keySets,
      @ForAll @IntRange(min = 0, max = 3) int which,
      @ForAll boolean oneOf) {
    String[] names = {"name", "lives", "barks", "n", "na"};
    StringBuilder schema = new StringBuilder("{\"type\": \"object\", \"properties\": {\"a\": {\"");
    schema.append(oneOf ? "oneOf" : "anyOf").append("\": [");
    for (int i = 0; i < keySets.size(); i++) {
      schema.append(i > 0 ? ", " : "").append("{\"type\": \"object\", \"properties\": {");
      int j = 0;
      for (int k : keySets.get(i)) {
        schema
            .append(j++ > 0 ? ", " : "")
            .append('"')
            .append(names[k])
            .append("\": {\"const\": ")
            .append(i)
            .append('}');
      }
      schema.append("}}");
    }
    schema.append("]}}}");
    // A name every object has, with values that differ: a tag. Otherwise, in an anyOf, names
    // matched to the objects one each (objects without properties aside).
    Set<Integer> common = new HashSet<>(keySets.get(0));
    keySets.forEach(common::retainAll);
    boolean served = !common.isEmpty() || (!oneOf && matchable(keySets));
    JsonSchemaGrammar g;
    try {
      g = JsonSchemaGrammar.compile(schema.toString());
    } catch (IllegalArgumentException e) {
      assertThat(served).as("%s: %s", schema, e.getMessage()).isFalse();
      return;
    }
    assertThat(served).as(schema.toString()).isTrue();
    // A key may begin only where some object has one.
    assertThat(prefix(g, "{\"a\": {\""))
        .as(schema.toString())
        .isEqualTo(keySets.stream().anyMatch(k -> !k.isEmpty()));
    Set<Integer> keys = keySets.get(which % keySets.size());
    int alternative = which % keySets.size();
    // Each alternative's object, its properties in every order: taken in exactly one order's
    // first property (the one picked), where the value is that alternative's.
    int taken = 0;
    for (List<Integer> order : orders(new ArrayList<>(keys))) {
      StringBuilder text = new StringBuilder("{\"a\": {");
      for (int i = 0; i < order.size(); i++) {
        text.append(i > 0 ? ", " : "")
            .append('"')
            .append(names[order.get(i)])
            .append("\": ")
            .append(alternative);
      }
      text.append("}}");
      taken += whole(g, text.toString()) ? 1 : 0;
    }
    assertThat(taken).as("orders of %s taken in %s", keys, schema).isEqualTo(1);
    if (keys.isEmpty()) {
      assertThat(whole(g, "{\"a\": {}}")).isTrue();
    }
  }

  /** Whether objects with these key sets can each be given a first name of its own. */
  private static boolean matchable(List<Set<Integer>> keySets) {
    List<Set<Integer>> nonEmpty = new ArrayList<>();
    keySets.forEach(
        k -> {
          if (!k.isEmpty()) nonEmpty.add(k);
        });
    return assignable(nonEmpty, 0, new HashSet<>());
  }

  private static boolean assignable(List<Set<Integer>> sets, int i, Set<Integer> used) {
    if (i == sets.size()) {
      return true;
    }
    for (int k : sets.get(i)) {
      if (used.add(k)) {
        if (assignable(sets, i + 1, used)) {
          return true;
        }
        used.remove(k);
      }
    }
    return false;
  }

  private static List<List<Integer>> orders(List<Integer> items) {
    if (items.isEmpty()) {
      return List.of(List.of());
    }
    List<List<Integer>> all = new ArrayList<>();
    for (int i = 0; i < items.size(); i++) {
      List<Integer> rest = new ArrayList<>(items);
      int first = rest.remove(i);
      for (List<Integer> o : orders(rest)) {
        List<Integer> order = new ArrayList<>(List.of(first));
        order.addAll(o);
        all.add(order);
      }
    }
    return all;
  }

  /**
   * A union of arrays whose items start differently (Pydantic's {@code list[int] | list[str]}): an
   * array is taken exactly when all its items are of one alternative and their count is within that
   * alternative's bounds; the empty array where one allows it.
   */
  @Property(tries = 300)
  void aUnionOfArraysIsTheArrayItsFirstItemPicks(
      @ForAll @Size(max = 5) List<Boolean> numbers,
      @ForAll @IntRange(min = 0, max = 2) int minInts,
      @ForAll @IntRange(min = 0, max = 3) int extraInts,
      @ForAll @IntRange(min = 0, max = 2) int minStrings,
      @ForAll boolean oneOf) {
    String schema =
        "{\"type\": \"object\", \"properties\": {\"a\": {\""
            + (oneOf ? "oneOf" : "anyOf")
            + "\": [{\"type\": \"array\", \"items\": {\"type\": \"integer\"}, \"minItems\": "
            + minInts
            + ", \"maxItems\": "
            + (minInts + extraInts)
            + "}, {\"type\": \"array\", \"items\": {\"type\": \"string\"}, \"minItems\": "
            + minStrings
            + "}, {\"type\": \"null\"}]}}}";
    if (oneOf && minInts == 0 && minStrings == 0) {
      assertThatThrownBy(() -> JsonSchemaGrammar.compile(schema))
          .hasMessageContaining("arrays that can both be empty are not supported in a oneOf");
      return;
    }
    JsonSchemaGrammar g = JsonSchemaGrammar.compile(schema);
    StringBuilder text = new StringBuilder("{\"a\": [");
    for (int i = 0; i < numbers.size(); i++) {
      text.append(i > 0 ? ", " : "")
          .append(numbers.get(i) ? Integer.toString(i) : "\"s" + i + "\"");
    }
    text.append("]}");
    long ints = numbers.stream().filter(n -> n).count();
    int size = numbers.size();
    boolean valid =
        (ints == size && size >= minInts && size <= minInts + extraInts)
            || (ints == 0 && size >= minStrings);
    assertThat(whole(g, text.toString())).as("%s in %s", text, schema).isEqualTo(valid);
    assertThat(whole(g, "{\"a\": null}")).isTrue();
    assertRefusedAsProperty(
        new String[][] {
          {
            "{\"type\": \"array\", \"items\": {\"type\": \"integer\"}}, {\"type\": \"array\","
                + " \"items\": {\"type\": \"number\"}}",
            "arrays whose items can start with the same character"
          },
          {
            "{\"type\": \"array\", \"items\": {\"type\": \"integer\"}}, {\"type\": \"array\","
                + " \"prefixItems\": [{\"type\": \"string\"}]}",
            "arrays with prefixItems"
          },
        },
        "{\"anyOf\": [",
        "]}");
  }

  /**
   * A discriminated union as Pydantic writes one (oneOf, a discriminator, the tag listed after
   * other fields): the tag is written first, its value picks the object, and the object's other
   * properties follow in their order; the objects stay as they are where they are used alone.
   */
  @Test
  void aDiscriminatedUnionWritesItsTagFirstWhereverItIsListed() {
    JsonSchemaGrammar g =
        JsonSchemaGrammar.compile(
            """
            {"type": "object", "properties": {
              "pet": {"oneOf": [{"$ref": "#/$defs/Cat"}, {"$ref": "#/$defs/Dog"}],
                      "discriminator": {"propertyName": "kind",
                        "mapping": {"cat": "#/$defs/Cat", "dog": "#/$defs/Dog"}}},
              "favourite": {"$ref": "#/$defs/Cat"}},
             "$defs": {
              "Cat": {"type": "object", "properties": {"lives": {"type": "integer"},
                      "kind": {"const": "cat"}}},
              "Dog": {"type": "object", "properties": {"name": {"type": "string"},
                      "good": {"type": "boolean"}, "kind": {"enum": ["dog", "puppy"]}}}}}
            """);
    Predicate<String> complete =
        text -> {
          byte[] b = text.getBytes(StandardCharsets.UTF_8);
          SchemaPrefix p = g.start();
          return p.accept(b, 0, b.length) && p.isComplete();
        };
    String cat = "{\"lives\": 9, \"kind\": \"cat\"}";
    assertThat(
            complete.test(
                "{\"pet\": {\"kind\": \"cat\", \"lives\": 9}, \"favourite\": " + cat + "}"))
        .isTrue();
    assertThat(
            complete.test(
                "{\"pet\": {\"kind\": \"puppy\", \"name\": \"Rex\", \"good\": true},"
                    + " \"favourite\": "
                    + cat
                    + "}"))
        .isTrue();
    for (String wrong :
        List.of(
            "{\"pet\": " + cat + ", \"favourite\": " + cat + "}",
            "{\"pet\": {\"kind\": \"cat\", \"name\": \"Tom\", \"good\": true}, \"favourite\": "
                + cat
                + "}",
            "{\"pet\": {\"kind\": \"dog\", \"lives\": 9}, \"favourite\": " + cat + "}",
            "{\"pet\": {\"kind\": \"cat\", \"lives\": 9}, \"favourite\": {\"kind\": \"cat\","
                + " \"lives\": 9}}")) {
      assertThat(complete.test(wrong)).as(wrong).isFalse();
    }
  }

  /**
   * {@code uniqueItems} on an array of literals (Pydantic's {@code set[Literal[...]]}): an array is
   * taken exactly when no value comes twice and its length is within minItems and maxItems, and an
   * item that repeats a value is refused before it ends.
   */
  @Property(tries = 300)
  void uniqueItemsOfLiteralsTakeEachValueOnce(
      @ForAll @Size(max = 6) List<@IntRange(min = 0, max = 4) Integer> picks,
      @ForAll @IntRange(min = 0, max = 3) int minItems,
      @ForAll @IntRange(min = 0, max = 4) int extra) {
    String[] values = {"\"red\"", "\"green\"", "\"blue\"", "null", "7"};
    int maxItems = minItems + extra;
    JsonSchemaGrammar g =
        JsonSchemaGrammar.compile(
            "{\"type\": \"array\", \"items\": {\"enum\": ["
                + String.join(", ", values)
                + "]}, \"uniqueItems\": true, \"minItems\": "
                + minItems
                + ", \"maxItems\": "
                + maxItems
                + "}");
    StringBuilder text = new StringBuilder("[");
    boolean valid = picks.size() >= minItems && picks.size() <= maxItems;
    for (int i = 0; i < picks.size(); i++) {
      String item = values[picks.get(i)];
      boolean repeat = picks.subList(0, i).contains(picks.get(i));
      if (repeat && i < maxItems) {
        // Room for an item, but not for this one: refused before it ends.
        String at = text + (i > 0 ? ", " : "") + item;
        assertThat(prefix(g, at)).as(at).isFalse();
      }
      valid &= !repeat;
      text.append(i > 0 ? ", " : "").append(item);
    }
    text.append("]");
    assertThat(whole(g, text.toString()))
        .as("%s in [%d, %d]", text, minItems, maxItems)
        .isEqualTo(valid);
  }

  /**
   * {@code uniqueItems} on strings (Pydantic's {@code set[str]}) and integers ({@code set[int]}):
   * taken exactly when no value comes twice, whatever escapes spell a string (a surrogate pair raw
   * or as two escapes) or whether a zero is written -0; a repeated item is refused where it would
   * end, and a 0 written before at once (no digit may follow it).
   */
  @Property(tries = 300)
  void uniqueStringsAndIntegersTakeEachValueOnce(
      @ForAll @Size(max = 6) List<@IntRange(min = 0, max = 5) Integer> picks,
      @ForAll @Size(min = 6, max = 6) List<Boolean> escaped) {
    String[] strings = {"", "a", "ab", "\u00e9", "\uD83D\uDE00", "a\uD83D\uDE00"};
    int[] integers = {0, -0, 1, -1, 10, 123456789};
    JsonSchemaGrammar g =
        JsonSchemaGrammar.compile(
            """
            {"type": "object", "properties": {
              "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": true},
              "ids": {"type": "array", "items": {"type": "integer"}, "uniqueItems": true}}}""");
    StringBuilder tags = new StringBuilder();
    StringBuilder ids = new StringBuilder();
    List<String> seenStrings = new ArrayList<>();
    List<Integer> seenIntegers = new ArrayList<>();
    boolean valid = true;
    for (int i = 0; i < picks.size(); i++) {
      String s = strings[picks.get(i)];
      String written = escaped.get(i) ? escapeAll(s) : s;
      tags.append(i > 0 ? ", " : "").append('"').append(written).append('"');
      valid &= !seenStrings.contains(s);
      seenStrings.add(s);
      String before = "{\"tags\": [" + tags;
      assertThat(prefix(g, before)).as(before).isEqualTo(valid);
      if (!valid) {
        break;
      }
    }
    for (int i = 0; valid && i < picks.size(); i++) {
      int v = integers[picks.get(i)];
      String text = picks.get(i) == 1 ? "-0" : Integer.toString(v);
      ids.append(i > 0 ? ", " : "").append(text);
      boolean repeat = seenIntegers.contains(v);
      seenIntegers.add(v);
      String before = "{\"tags\": [], \"ids\": [" + ids + "]";
      assertThat(prefix(g, before)).as(before).isEqualTo(!repeat);
      if (repeat && v == 0) {
        // A zero cannot grow into another value: refused as soon as it is written.
        assertThat(prefix(g, "{\"tags\": [], \"ids\": [" + ids)).isFalse();
      } else if (repeat) {
        // Refused where it would end, not while it can still grow into another value.
        assertThat(prefix(g, "{\"tags\": [], \"ids\": [" + ids + "5]")).isTrue();
      }
      if (repeat) {
        break;
      }
    }
    if (valid) {
      assertThat(whole(g, "{\"tags\": [" + tags + "], \"ids\": []}")).isTrue();
    }
  }

  /** Every character of {@code s} as a \\u escape (a surrogate pair as two). */
  private static String escapeAll(String s) {
    StringBuilder b = new StringBuilder();
    for (char c : s.toCharArray()) {
      b.append(String.format("\\u%04x", (int) c));
    }
    return b.toString();
  }

  @Test
  void uniqueItemsIsRefusedWhereItCannotBeKept() {
    String[][] cases = {
      {
        "{\"type\": \"array\", \"items\": {\"type\": \"string\", \"maxLength\": 2},"
            + " \"uniqueItems\": true}",
        "uniqueItems is only supported"
      },
      {
        "{\"type\": \"array\", \"items\": {\"type\": \"integer\", \"minimum\": 0},"
            + " \"uniqueItems\": true}",
        "uniqueItems is only supported"
      },
      {
        "{\"type\": \"array\", \"items\": {\"type\": \"number\"}, \"uniqueItems\": true}",
        "uniqueItems is only supported"
      },
      {
        "{\"type\": \"array\", \"items\": {\"enum\": [\"a\", \"b\"]}, \"uniqueItems\": true, \"minItems\": 3}",
        "minItems is more than the 2 values uniqueItems allows"
      },
      {
        "{\"type\": \"array\", \"items\": {\"enum\": [{\"x\": 1, \"y\": 2}, {\"y\": 2, \"x\": 1}]}, \"uniqueItems\": true}",
        "uniqueItems is only supported"
      },
    };
    for (String[] c : cases) {
      assertThatThrownBy(() -> JsonSchemaGrammar.compile(c[0])).as(c[0]).hasMessageContaining(c[1]);
    }
    // Booleans, at most two; uniqueItems false is no constraint.
    JsonSchemaGrammar flags =
        JsonSchemaGrammar.compile(
            "{\"type\": \"array\", \"items\": {\"type\": \"boolean\"}, \"uniqueItems\": true}");
    assertThat(whole(flags, "[true, false]")).isTrue();
    assertThat(prefix(flags, "[true, false,")).isFalse();
    JsonSchemaGrammar any =
        JsonSchemaGrammar.compile(
            "{\"type\": \"array\", \"items\": {\"type\": \"string\"}, \"uniqueItems\": false}");
    assertThat(whole(any, "[\"a\", \"a\"]")).isTrue();
  }

  /**
   * Free values: {@code {}} (Pydantic's {@code Any}) takes any JSON value, {@code {"type":
   * "object"}} (a free-form argument, {@code dict[str, Any]}) any object and {@code {"type":
   * "array"}} any array, written compact or pretty; nothing else.
   */
  @Property(tries = 200)
  void freeValuesTakeAnyValueOfTheirKind(@ForAll long seed, @ForAll boolean pretty)
      throws Exception {
    JsonSchemaGrammar g =
        JsonSchemaGrammar.compile(
            "{\"type\": \"object\", \"properties\": {\"any\": {\"description\": \"x\"},"
                + " \"obj\": {\"type\": \"object\"}, \"arr\": {\"type\": \"array\"},"
                + " \"map\": {\"type\": \"object\", \"additionalProperties\": true},"
                + " \"n\": {\"type\": \"integer\"}}}");
    Random r = new Random(seed);
    ObjectNode o = JsonNodeFactory.instance.objectNode();
    o.set("any", randomValue(r, 3));
    o.set("obj", randomObject(r, 3));
    o.set("arr", randomArray(r, 3));
    o.set("map", randomObject(r, 2));
    o.put("n", r.nextInt(100));
    String text =
        pretty ? JSON.writerWithDefaultPrettyPrinter().writeValueAsString(o) : o.toString();
    assertThat(whole(g, text)).as(text).isTrue();
    assertThat(prefix(g, "{\"any\": 1, \"obj\": [")).isFalse();
    assertThat(prefix(g, "{\"any\": 1, \"obj\": {}, \"arr\": {")).isFalse();
    assertThat(prefix(g, "{\"any\": 1, \"obj\": {}, \"arr\": [], \"map\": 3")).isFalse();
    // No properties and no others: only the empty object, not a free one.
    JsonSchemaGrammar closed =
        JsonSchemaGrammar.compile(
            "{\"type\": \"object\", \"properties\": {\"x\": {\"type\": \"object\","
                + " \"additionalProperties\": false}}}");
    assertThat(whole(closed, "{\"x\": {}}")).isTrue();
    assertThat(prefix(closed, "{\"x\": {\"")).isFalse();
    // At the root too.
    JsonSchemaGrammar object = JsonSchemaGrammar.compile("{\"type\": \"object\"}");
    assertThat(whole(object, o.toString())).isTrue();
    assertThat(prefix(object, "[")).isFalse();
  }

  private static JsonNode randomValue(Random r, int depth) {
    JsonNodeFactory f = JsonNodeFactory.instance;
    return switch (r.nextInt(depth > 0 ? 8 : 6)) {
      case 0 -> f.numberNode(r.nextInt(2000) - 1000);
      case 1 -> f.numberNode(r.nextDouble() * 1e4 - 5e3);
      case 2 -> f.textNode(r.nextBoolean() ? "t\u00e9\"\n" : "");
      case 3 -> f.booleanNode(r.nextBoolean());
      case 4 -> f.nullNode();
      case 5 -> f.numberNode(0);
      case 6 -> randomObject(r, depth - 1);
      default -> randomArray(r, depth - 1);
    };
  }

  private static ObjectNode randomObject(Random r, int depth) {
    ObjectNode o = JsonNodeFactory.instance.objectNode();
    for (int i = 0; i < r.nextInt(4); i++) {
      o.set("k" + i, randomValue(r, depth));
    }
    return o;
  }

  private static ArrayNode randomArray(Random r, int depth) {
    ArrayNode a = JsonNodeFactory.instance.arrayNode();
    for (int i = 0; i < r.nextInt(4); i++) {
      a.add(randomValue(r, depth));
    }
    return a;
  }

  /**
   * A type beside enum or const keeps only the values of that type (none left is refused); beside
   * anyOf or oneOf it must hold for every alternative, and other keywords there are refused.
   */
  @Test
  void aTypeBesideAnEnumKeepsItsValuesOfThatType() {
    JsonSchemaGrammar pets =
        JsonSchemaGrammar.compile(
            "{\"type\": \"object\", \"properties\": {\"p\": {\"type\": [\"object\", \"null\"],"
                + " \"anyOf\": [{\"type\": \"object\", \"properties\": {\"k\": {\"const\":"
                + " 1}}}, {\"type\": \"null\"}]}}}");
    assertThat(whole(pets, "{\"p\": {\"k\": 1}}")).isTrue();
    JsonSchemaGrammar g =
        JsonSchemaGrammar.compile(
            "{\"type\": \"object\", \"properties\": {\"s\": {\"type\": \"string\", \"enum\":"
                + " [\"a\", 1, null]}, \"n\": {\"type\": [\"integer\", \"null\"], \"enum\": [1.5,"
                + " 2.0, null, \"x\"]}, \"c\": {\"enum\": [\"p\", \"q\"], \"const\": \"q\"}}}");
    assertThat(whole(g, "{\"s\": \"a\", \"n\": 2.0, \"c\": \"q\"}")).isTrue();
    assertThat(whole(g, "{\"s\": \"a\", \"n\": null, \"c\": \"q\"}")).isTrue();
    assertThat(prefix(g, "{\"s\": 1")).isFalse();
    assertThat(prefix(g, "{\"s\": n")).isFalse();
    assertThat(prefix(g, "{\"s\": \"a\", \"n\": 1.")).isFalse();
    assertThat(prefix(g, "{\"s\": \"a\", \"n\": \"")).isFalse();
    assertThat(prefix(g, "{\"s\": \"a\", \"n\": null, \"c\": \"p")).isFalse();
    assertRefusedAsProperty(
        new String[][] {
          {"{\"type\": \"integer\", \"const\": \"s\"}", "no value of its const is of its type"},
          {"{\"type\": \"string\", \"enum\": [1, 2]}", "no value of its enum is of its type"},
          {"{\"enum\": [\"p\"], \"const\": \"q\"}", "its const is not in its enum"},
          {"{\"enum\": [1], \"anyOf\": [{\"type\": \"integer\"}]}", "beside anyOf or oneOf"},
          {
            "{\"type\": \"integer\", \"anyOf\": [{\"type\": \"string\"}, {\"type\": \"null\"}]}",
            "an alternative of anyOf has values not of this type"
          },
          {"{\"minimum\": 3, \"anyOf\": [{\"type\": \"integer\"}]}", "minimum beside anyOf"},
        },
        "",
        "");
  }

  /**
   * A map whose keys are an enum (Pydantic's {@code dict[Literal[...], str]}): each key at most
   * once, their count within minProperties and maxProperties; a repeated key is refused before it
   * ends.
   */
  @Property(tries = 300)
  void mapsOfEnumKeysWriteEachKeyOnce(
      @ForAll @Size(max = 5) List<@IntRange(min = 0, max = 3) Integer> picks,
      @ForAll @IntRange(min = 0, max = 2) int minProperties,
      @ForAll @IntRange(min = 0, max = 3) int extra) {
    String[] keys = {"en", "fr", "de", "e"};
    int maxProperties = minProperties + extra;
    JsonSchemaGrammar g =
        JsonSchemaGrammar.compile(
            "{\"type\": \"object\", \"additionalProperties\": {\"type\": \"integer\"},"
                + " \"propertyNames\": {\"enum\": [\"en\", \"fr\", \"de\", \"e\"]},"
                + " \"minProperties\": "
                + minProperties
                + ", \"maxProperties\": "
                + maxProperties
                + "}");
    StringBuilder text = new StringBuilder("{");
    boolean valid =
        picks.size() >= minProperties && picks.size() <= Math.min(maxProperties, keys.length);
    for (int i = 0; i < picks.size(); i++) {
      String key = "\"" + keys[picks.get(i)] + "\"";
      boolean repeat = picks.subList(0, i).contains(picks.get(i));
      String sep = i > 0 ? ", " : "";
      if (repeat && i < maxProperties) {
        assertThat(prefix(g, text + sep + key + ":")).as(text + sep + key).isFalse();
      }
      valid &= !repeat;
      text.append(sep).append(key).append(": ").append(i);
    }
    text.append("}");
    assertThat(whole(g, text.toString()))
        .as("%s in [%d, %d]", text, minProperties, maxProperties)
        .isEqualTo(valid);
  }

  /** Keys of a pattern, lengths or format; counts only with enum keys; keys are strings. */
  @Test
  void mapKeysFollowTheirPropertyNames() {
    JsonSchemaGrammar g =
        JsonSchemaGrammar.compile(
            "{\"type\": \"object\", \"properties\": {\"ids\": {\"type\": \"object\","
                + " \"propertyNames\": {\"pattern\": \"^[a-z]{1,3}$\"}, \"additionalProperties\":"
                + " {\"type\": \"integer\"}}, \"any\": {\"type\": \"object\", \"propertyNames\":"
                + " {\"maxLength\": 2}}}}");
    assertThat(whole(g, "{\"ids\": {\"ab\": 1, \"c\": 2}, \"any\": {\"x\": [1, {}]}}")).isTrue();
    assertThat(prefix(g, "{\"ids\": {\"A")).isFalse();
    assertThat(prefix(g, "{\"ids\": {\"abcd")).isFalse();
    assertThat(prefix(g, "{\"ids\": {}, \"any\": {\"xyz")).isFalse();
    assertRefusedAsProperty(
        new String[][] {
          {
            "{\"type\": \"object\", \"additionalProperties\": {\"type\": \"integer\"},"
                + " \"propertyNames\": {\"pattern\": \"^a\"}, \"maxProperties\": 2}",
            "maxProperties on a map is only supported with an enum of propertyNames"
          },
          {
            "{\"type\": \"object\", \"propertyNames\": {\"type\": \"integer\"}}",
            "propertyNames must describe strings"
          },
          {
            "{\"type\": \"object\", \"propertyNames\": {\"enum\": [\"a\"]},"
                + " \"minProperties\": 2}",
            "minProperties is more than the 1 keys allowed"
          },
        },
        "",
        "");
  }

  /**
   * Pydantic's dict keyed by a constrained string: patternProperties with one pattern is a map of
   * keys matching it (with propertyNames' lengths), each value of the pattern's schema.
   */
  @Test
  void patternPropertiesWithOnePatternIsAMapOfMatchingKeys() {
    JsonSchemaGrammar g =
        JsonSchemaGrammar.compile(
            """
            {"type": "object", "properties": {
              "scores": {"type": "object", "patternProperties": {"^[a-z]+$": {"type": "integer"}},
                         "propertyNames": {"maxLength": 3}, "additionalProperties": false},
              "meta": {"type": "object", "patternProperties": {"^x-": {}}}}}""");
    assertThat(whole(g, "{\"scores\": {\"ab\": 1, \"cde\": -2}, \"meta\": {\"x-a\": [1]}}"))
        .isTrue();
    assertThat(whole(g, "{\"scores\": {}, \"meta\": {}}")).isTrue();
    assertThat(prefix(g, "{\"scores\": {\"A")).isFalse();
    assertThat(prefix(g, "{\"scores\": {\"abcd")).isFalse();
    assertThat(prefix(g, "{\"scores\": {\"ab\": \"")).isFalse();
    assertThat(prefix(g, "{\"scores\": {}, \"meta\": {\"y")).isFalse();
    assertRefusedAsProperty(
        new String[][] {
          {
            "\"patternProperties\": {\"^a\": {}, \"^b\": {}}}",
            "patternProperties is supported with one pattern"
          },
          {
            "\"properties\": {\"k\": {}}, \"patternProperties\": {\"^a\": {}}}",
            "patternProperties beside properties is not supported"
          },
          {
            "\"patternProperties\": {\"^a\": {}}, \"propertyNames\": {\"pattern\": \"b\"}}",
            "pattern beside patternProperties is not supported"
          },
          {
            "\"patternProperties\": {\"^a\": {}}, \"propertyNames\": {\"type\": \"integer\"}}",
            "propertyNames must describe strings"
          },
          {
            "\"patternProperties\": {\"^a\": {}}, \"maxProperties\": 2}",
            "maxProperties on a map is only supported with an enum of propertyNames"
          },
        },
        "{\"type\": \"object\", ",
        "");
  }

  /** Every listed property is written: dependentRequired holds where what it requires is listed. */
  @Test
  void dependentRequiredHoldsWhereItsNamesAreListed() {
    JsonSchemaGrammar g =
        JsonSchemaGrammar.compile(
            """
            {"type": "object", "properties": {"card": {"type": "string"}, "cvv": {"type": "string"}},
             "dependentRequired": {"card": ["cvv"], "iban": ["bic"]},
             "dependencies": {"cvv": ["card"]}}""");
    assertThat(whole(g, "{\"card\": \"1\", \"cvv\": \"2\"}")).isTrue();
    assertRefusedAsProperty(
        new String[][] {
          {
            "\"properties\": {\"card\": {}}, \"dependentRequired\": {\"card\": [\"cvv\"]}}",
            "property cvv is required with card but not listed"
          },
          {
            "\"properties\": {\"card\": {}}, \"dependencies\": {\"card\": {\"required\": []}}}",
            "dependencies with a schema is not supported"
          },
          {
            "\"additionalProperties\": {}, \"dependentRequired\": {\"a\": [\"b\"]}}",
            "dependentRequired without properties or items listed is not supported"
          },
          {
            "\"additionalProperties\": {\"type\": \"integer\"}, \"dependentRequired\": {}}",
            "dependentRequired without properties or items listed is not supported"
          },
        },
        "{\"type\": \"object\", ",
        "");
  }

  /** Cents: any number of them, no fraction of one, and as many trailing zeros as wanted. */
  @Test
  void aNumberThatIsAMultipleOfACentHasAtMostTwoSignificantDecimals() {
    JsonSchemaGrammar g =
        JsonSchemaGrammar.compile(
            "{\"type\": \"object\", \"properties\": {\"price\": {\"type\": \"number\","
                + " \"multipleOf\": 0.01}}}");
    for (String ok : List.of("12.34", "-0.5", "123456789.00000", "0", "7")) {
      assertThat(whole(g, "{\"price\": " + ok + "}")).as(ok).isTrue();
    }
    for (String refused : List.of("12.345", "0.001", "1.0000001")) {
      assertThat(prefix(g, "{\"price\": " + refused)).as(refused).isFalse();
      assertThat(prefix(g, "{\"price\": " + refused.substring(0, refused.length() - 1)))
          .as(refused)
          .isTrue();
    }
  }

  /** A bounded string counts characters (escapes and multi-byte ones are one each). */
  @Property(tries = 300)
  void boundedStringsCountCharacters(
      @ForAll @StringLength(max = 8) String value,
      @ForAll @IntRange(min = 0, max = 6) int min,
      @ForAll @IntRange(min = 0, max = 4) int extra)
      throws Exception {
    Assume.that(value.chars().noneMatch(c -> Character.isSurrogate((char) c)));
    int max = min + extra;
    JsonSchemaGrammar g =
        JsonSchemaGrammar.compile(
            "{\"type\": \"object\", \"properties\": {\"s\": {\"type\": \"string\","
                + " \"minLength\": "
                + min
                + ", \"maxLength\": "
                + max
                + "}}}");
    byte[] b = ("{\"s\":" + JSON.writeValueAsString(value) + "}").getBytes(StandardCharsets.UTF_8);
    SchemaPrefix p = g.start();
    int length = value.codePointCount(0, value.length());
    assertThat(p.accept(b, 0, b.length) && p.isComplete())
        .as("%s (%d) in [%d, %d]", value, length, min, max)
        .isEqualTo(length >= min && length <= max);
  }

  @Test
  void allOfOneSchemaIsThatSchema() {
    JsonSchemaGrammar g =
        JsonSchemaGrammar.compile(
            "{\"type\": \"object\", \"properties\": {\"a\": {\"allOf\": [{\"$ref\":"
                + " \"#/$defs/d\"}], \"description\": \"a day\"}}, \"$defs\": {\"d\":"
                + " {\"type\": \"string\", \"format\": \"date\"}}}");
    assertThat(whole(g, "{\"a\": \"2020-01-31\"}")).isTrue();
    assertThat(prefix(g, "{\"a\": \"2020-01-32\"}")).isFalse();
  }

  /**
   * allOf of several schemas is the schema their keywords make together: a base object and its
   * extension (OpenAPI's composition), a type and its bounds; what cannot be put together is
   * refused, naming it.
   */
  @Test
  void allOfIsTheSchemaItsSchemasMakeTogether() {
    JsonSchemaGrammar g =
        JsonSchemaGrammar.compile(
            """
            {"type": "object", "properties": {
              "pet": {"allOf": [{"$ref": "#/$defs/Base"},
                {"type": "object", "properties": {"lives": {"type": "integer"}},
                 "required": ["lives"]}], "description": "a cat"},
              "code": {"allOf": [{"type": "string"}, {"maxLength": 2}]}},
             "$defs": {"Base": {"type": "object", "properties": {"id": {"type": "integer"}},
                       "required": ["id"]}}}
            """);
    assertThat(whole(g, "{\"pet\": {\"id\": 1, \"lives\": 9}, \"code\": \"ab\"}")).isTrue();
    assertThat(whole(g, "{\"pet\": {\"id\": 1}, \"code\": \"ab\"}")).isFalse();
    assertThat(prefix(g, "{\"pet\": {\"id\": 1, \"lives\": 9}, \"code\": \"abc")).isFalse();
    String[][] refused = {
      {
        "[{\"type\": \"object\", \"properties\": {\"x\": {\"type\": \"integer\"}}}, {\"type\":"
            + " \"object\", \"properties\": {\"x\": {\"type\": \"string\"}}}]",
        "property x in two schemas of allOf"
      },
      {"[{\"type\": \"string\"}, {\"type\": \"integer\"}]", "type in two schemas of allOf"},
      {
        "[{\"type\": \"object\", \"properties\": {\"x\": {\"type\": \"integer\"}},"
            + " \"additionalProperties\": false}, {\"properties\": {\"y\": {\"type\":"
            + " \"integer\"}}}]",
        "additionalProperties and properties from two schemas"
      },
      {"[{\"type\": \"string\"}, {\"allOf\": [{\"maxLength\": 2}]}]", "allOf inside allOf"},
      {"[]", "allOf must be a non-empty array"},
    };
    assertRefusedAsProperty(refused, "{\"allOf\": ", "}");
  }

  @Test
  void boundsThatCannotBeKeptAreRefused() {
    String[][] cases = {
      {
        "{\"type\": \"number\", \"exclusiveMinimum\": 0, \"exclusiveMaximum\": 1e-18}",
        "no number of at most 18 digits is within its bounds"
      },
      {"{\"type\": \"number\", \"minimum\": \"0\"}", "minimum must be a number"},
      {
        "{\"type\": \"integer\", \"minimum\": 3, \"maximum\": 2}", "no integer is within its bounds"
      },
      {"{\"type\": \"integer\", \"exclusiveMinimum\": 1, \"exclusiveMaximum\": 2}", "no integer"},
      {
        "{\"type\": \"string\", \"minLength\": 3, \"maxLength\": 2}", "minLength is above maxLength"
      },
      {"{\"type\": \"string\", \"maxLength\": -1}", "must be a non-negative integer"},
      {"{\"enum\": [1, 2], \"minimum\": 2}", "bounds beside enum or const"},
      {"{\"const\": 4, \"multipleOf\": 2}", "bounds beside enum or const"},
      {"{\"type\": \"object\", \"minProperties\": 1}", "minProperties without properties"},
      {"{\"type\": \"array\", \"maxItems\": 2}", "maxItems without properties or items"},
      {"false", "the schema false allows no value"},
      {"{\"additionalProperties\": false}", "a schema needs a type"},
      {
        "{\"type\": \"object\", \"properties\": {\"x\": {\"type\": \"integer\"}},"
            + " \"minProperties\": 2}",
        "minProperties is more than the 1 listed"
      },
      {
        "{\"type\": \"object\", \"properties\": {\"x\": {\"type\": \"integer\"}, \"y\":"
            + " {\"type\": \"integer\"}}, \"maxProperties\": 1}",
        "maxProperties is fewer than the 2 listed, which are all written"
      },
      {
        "{\"type\": \"object\", \"additionalProperties\": {\"type\": \"integer\"},"
            + " \"maxProperties\": 3}",
        "maxProperties on a map is only supported with an enum of propertyNames"
      },
      {
        "{\"type\": \"array\", \"prefixItems\": [{\"type\": \"integer\"}], \"items\": true}",
        "items true (any value) is not supported"
      },
      {
        "{\"type\": \"array\", \"items\": {\"type\": \"integer\"}, \"additionalItems\": false}",
        "additionalItems is only supported beside an array of items"
      },
      {
        "{\"type\": \"array\", \"prefixItems\": [{\"type\": \"integer\"}], \"items\":"
            + " [{\"type\": \"integer\"}]}",
        "prefixItems beside an array of items"
      },
      {"{\"type\": \"array\", \"prefixItems\": {\"type\": \"integer\"}}", "must be an array"},
      {"{\"type\": \"integer\", \"multipleOf\": 0}", "multipleOf must be greater than 0"},
      {"{\"type\": \"number\", \"multipleOf\": -0.5}", "multipleOf must be greater than 0"},
      {"{\"type\": \"integer\", \"multipleOf\": \"2\"}", "multipleOf must be a number"},
      {
        "{\"type\": \"integer\", \"minimum\": 1, \"maximum\": 4, \"multipleOf\": 5}",
        "no integer is within its bounds and a multiple of 5"
      },
      {
        "{\"type\": \"integer\", \"minimum\": 6, \"maximum\": 9, \"multipleOf\": 2.5}",
        "no integer is within its bounds and a multiple of 2.5"
      },
    };
    assertRefusedAsProperty(cases, "", "");
    // A bound past 18 digits bounds nothing that is written.
    JsonSchemaGrammar huge =
        JsonSchemaGrammar.compile(
            "{\"type\": \"object\", \"properties\": {\"a\": {\"type\": \"integer\","
                + " \"maximum\": 1e30}}}");
    assertThat(whole(huge, "{\"a\": -123456789012345678}")).isTrue();
  }

  /**
   * A bounded number, a multiple of a step or not: a prefix is taken exactly when some number
   * within the bounds (and a multiple) is written starting with it (on a grid of thousandths,
   * trailing zeros and -0 included, and with a fourth decimal after a prefix of three), and a whole
   * one exactly when it is within them (and a multiple).
   */
  @Property(tries = 300)
  void boundedNumbersTakeExactlyThePrefixesOfNumbersWithinTheirBounds(
      @ForAll @IntRange(min = -300, max = 300) int a,
      @ForAll @IntRange(min = 0, max = 60) int width,
      @ForAll @IntRange(min = -99999, max = 99999) int thousandths,
      @ForAll boolean exclusive,
      @ForAll @IntRange(min = 0, max = 5) int step) {
    Assume.that(!exclusive || width > 0); // else nothing is within them
    BigDecimal lo = BigDecimal.valueOf(a, 1);
    BigDecimal hi = BigDecimal.valueOf(a + width, 1);
    // Steps of at most three decimals, so every multiple is on the grid; none at 0.
    BigDecimal multiple =
        step == 0
            ? null
            : new BigDecimal(new String[] {"0.05", "0.25", "0.2", "1.5", "0.125"}[step - 1]);
    String bounds =
        (exclusive ? "\"exclusiveMinimum\": " : "\"minimum\": ")
            + lo.toPlainString()
            + (exclusive ? ", \"exclusiveMaximum\": " : ", \"maximum\": ")
            + hi.toPlainString()
            + (multiple == null ? "" : ", \"multipleOf\": " + multiple.toPlainString());
    Predicate<BigDecimal> within =
        v ->
            (exclusive
                    ? v.compareTo(lo) > 0 && v.compareTo(hi) < 0
                    : v.compareTo(lo) >= 0 && v.compareTo(hi) <= 0)
                && (multiple == null || v.remainder(multiple).signum() == 0);
    List<String> forms = new ArrayList<>();
    for (int u = a * 100 - 10; u <= (a + width) * 100 + 10; u++) {
      BigDecimal v = BigDecimal.valueOf(u, 3);
      if (!within.test(v)) {
        continue;
      }
      for (int scale = Math.max(0, v.stripTrailingZeros().scale()); scale <= 3; scale++) {
        String text = v.setScale(scale).toPlainString();
        forms.add(text);
        if (u == 0) {
          forms.add("-" + text);
        }
      }
    }
    Assume.that(!forms.isEmpty()); // else no multiple is within them, and compiling refuses
    JsonSchemaGrammar g =
        JsonSchemaGrammar.compile(
            "{\"type\": \"object\", \"properties\": {\"n\": {\"type\": \"number\", "
                + bounds
                + "}}}");
    BigDecimal value = BigDecimal.valueOf(thousandths, 3);
    String text = value.toPlainString();
    for (int end = 1; end <= text.length(); end++) {
      String prefix = text.substring(0, end);
      boolean possible =
          forms.stream().anyMatch(f -> f.startsWith(prefix)) || continuesWithin(prefix, within);
      assertThat(prefix(g, "{\"n\":" + prefix))
          .as("%s with %s", prefix, bounds)
          .isEqualTo(possible);
    }
    assertThat(whole(g, "{\"n\":" + text + "}"))
        .as("%s with %s", text, bounds)
        .isEqualTo(within.test(value));
  }

  /** 0.000 goes on to 0.0001, within (0, 0.1): a prefix the grid of thousandths alone misses. */
  @Example
  void aPrefixAtTheGridsFinestGoesOnWithinExclusiveBounds() {
    boundedNumbersTakeExactlyThePrefixesOfNumbersWithinTheirBounds(0, 1, 0, true, 0);
  }

  /**
   * Whether a prefix with three decimals (the grid's finest) goes on to a number within the bounds
   * with a fourth: 0.000 to 0.0001 within (0, 0.1), say. Bounds on a grid of tenths are met by one
   * of the ten, when by any number the prefix starts.
   */
  private static boolean continuesWithin(String prefix, Predicate<BigDecimal> within) {
    int point = prefix.indexOf('.');
    if (point < 0 || prefix.length() - point - 1 != 3) {
      return false;
    }
    BigDecimal p = new BigDecimal(prefix);
    BigDecimal step = BigDecimal.valueOf(prefix.startsWith("-") ? -1 : 1, 4);
    for (int k = 0; k < 10; k++) {
      if (within.test(p.add(step.multiply(BigDecimal.valueOf(k))))) {
        return true;
      }
    }
    return false;
  }

  /** A map: any keys, written compact or pretty, each value of its schema; none other taken. */
  @Property(tries = 200)
  void mapsTakeAnyKeysWithValuesOfTheirSchema(
      @ForAll Map<@StringLength(max = 6) String, @IntRange(min = -3, max = 1000) Integer> entries,
      @ForAll boolean pretty)
      throws Exception {
    JsonSchemaGrammar g =
        JsonSchemaGrammar.compile(
            "{\"type\": \"object\", \"properties\": {\"m\": {\"type\": \"object\","
                + " \"additionalProperties\": {\"type\": \"integer\", \"minimum\": 0}}}}");
    Assume.that(
        entries.keySet().stream()
            .allMatch(k -> k.chars().noneMatch(c -> Character.isSurrogate((char) c))));
    ObjectNode root = JsonNodeFactory.instance.objectNode();
    ObjectNode m = root.putObject("m");
    entries.forEach(m::put);
    String text =
        pretty
            ? JSON.writer(SerializationFeature.INDENT_OUTPUT).writeValueAsString(root)
            : JSON.writeValueAsString(root);
    byte[] b = text.getBytes(StandardCharsets.UTF_8);
    SchemaPrefix p = g.start();
    boolean whitespaceWithinLimits = !text.contains(" ".repeat(JsonPrefix.MAX_WHITESPACE + 1));
    Assume.that(whitespaceWithinLimits);
    assertThat(p.accept(b, 0, b.length) && p.isComplete())
        .as(text)
        .isEqualTo(entries.values().stream().allMatch(v -> v >= 0));
  }
}
