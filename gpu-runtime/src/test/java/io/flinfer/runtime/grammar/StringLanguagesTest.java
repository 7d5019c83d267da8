package io.flinfer.runtime.grammar;

import static io.flinfer.runtime.grammar.SchemaPrefixTest.prefix;
import static io.flinfer.runtime.grammar.SchemaPrefixTest.whole;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dk.brics.automaton.Automaton;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Assume;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.From;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;

/**
 * Strings whose pattern or format meets lengths, and unions of such strings: a prefix is taken
 * exactly when some string of the language starts with it, so that no string begun can be left
 * without a way to end.
 */
class StringLanguagesTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final int LONGEST = 6;

  /** One string schema: a pattern (or none), the fewest and the most characters (-1: none). */
  record Alternative(String pattern, int min, int max) {
    ObjectNode schema() {
      ObjectNode s = JSON.createObjectNode().put("type", "string");
      if (pattern != null) {
        s.put("pattern", pattern);
      }
      if (min > 0) {
        s.put("minLength", min);
      }
      if (max >= 0) {
        s.put("maxLength", max);
      }
      return s;
    }

    /**
     * This alternative with a most of 5 where it has none, so that every string of it is among the
     * reference's (up to {@link #LONGEST}).
     */
    Alternative bounded() {
      return max < 0 ? new Alternative(pattern, min, 5) : this;
    }

    boolean takes(String text) {
      return (pattern == null || Pattern.compile(pattern).matcher(text).find())
          && text.length() >= min
          && (max < 0 || text.length() <= max);
    }
  }

  @Provide
  Arbitrary<Alternative> alternatives() {
    Arbitrary<String> patterns =
        Arbitraries.of(
            "^a+b$", "^(ab)*$", "^a?b?a?$", "b", "^[ab]{2,3}$", "a{2}", "^b*$", "^(aa)+$", "ba$");
    return Combinators.combine(
            patterns.injectNull(0.15),
            Arbitraries.integers().between(0, 3),
            Arbitraries.integers().between(-1, 4))
        .as(Alternative::new);
  }

  /** Every string of {a, b} up to {@link #LONGEST} characters. */
  private static List<String> strings() {
    List<String> all = new ArrayList<>(List.of(""));
    for (int i = 0; i < all.size(); i++) {
      if (all.get(i).length() < LONGEST) {
        all.add(all.get(i) + "a");
        all.add(all.get(i) + "b");
      }
    }
    return all;
  }

  /**
   * A schema's strings (those of {@code language}, all shorter than {@link #LONGEST}) against every
   * string of {a, b}: taken whole exactly when in it, as a prefix exactly when one in it starts so.
   */
  private static void assertTakesExactly(String schema, List<String> language) {
    JsonSchemaGrammar g = compile(schema);
    for (String text : strings()) {
      boolean started = language.stream().anyMatch(w -> w.startsWith(text));
      assertThat(prefix(g, "{\"s\": \"" + text))
          .as("%s begun in %s", text, schema)
          .isEqualTo(started);
      assertThat(prefix(g, "{\"s\": \"" + text + "\"}") && whole(g, "{\"s\": \"" + text + "\"}"))
          .as("%s in %s", text, schema)
          .isEqualTo(language.contains(text));
    }
  }

  /** The schema refused where {@code refused}, else taking exactly {@code language}. */
  private static void assertTakesExactlyOrRefused(
      String schema, List<String> language, boolean refused) {
    if (refused) {
      assertThatThrownBy(() -> compile(schema))
          .as(schema)
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageStartingWith("json_schema at ");
    } else {
      assertTakesExactly(schema, language);
    }
  }

  private static List<String> language(List<Alternative> alternatives, List<String> literals) {
    List<String> language = new ArrayList<>();
    for (String text : strings()) {
      if (literals.contains(text) || alternatives.stream().anyMatch(a -> a.takes(text))) {
        language.add(text);
      }
    }
    return language;
  }

  @Property(tries = 300)
  void aPatternWithLengthsTakesExactlyThePrefixesOfItsStrings(
      @ForAll("alternatives") Alternative a) {
    Alternative bounded = a.bounded();
    List<String> language = language(List.of(bounded), List.of());
    String schema = bounded.schema().toString();
    if (bounded.min() > bounded.max()) {
      assertRefused(schema, "minLength is above maxLength");
    } else {
      assertTakesExactlyOrRefused(schema, language, language.isEmpty());
    }
  }

  @Property(tries = 300)
  void aUnionOfStringsTakesExactlyThePrefixesOfItsStrings(
      @ForAll @Size(min = 1, max = 3) List<@From("alternatives") Alternative> alternatives,
      @ForAll @Size(max = 2) List<@From("literals") String> literals) {
    List<Alternative> bounded = alternatives.stream().map(Alternative::bounded).toList();
    ArrayNode anyOf = JSON.createArrayNode();
    bounded.forEach(a -> anyOf.add(a.schema()));
    if (!literals.isEmpty()) {
      ArrayNode values = anyOf.addObject().putArray("enum");
      literals.stream().distinct().forEach(values::add);
    }
    String schema = JSON.createObjectNode().set("anyOf", anyOf).toString();
    List<String> language = language(bounded, literals);
    // An alternative that is contradictory alone, or takes no string, refuses the union.
    assertTakesExactlyOrRefused(
        schema,
        language,
        bounded.stream()
            .anyMatch(a -> a.min() > a.max() || language(List.of(a), List.of()).isEmpty()));
  }

  /**
   * A oneOf of two strings is served exactly where no string is of both (the automata's product
   * search against the automaton library's own intersection), and takes the strings of either.
   */
  @Property(tries = 300)
  void aOneOfOfStringsIsServedExactlyWhereTheyShareNoString(
      @ForAll("alternatives") Alternative a, @ForAll("alternatives") Alternative b) {
    Assume.that(a.min() <= a.max() || a.max() < 0);
    Assume.that(b.min() <= b.max() || b.max() < 0);
    Automaton both = automaton(a).intersection(automaton(b));
    Assume.that(!automaton(a).isEmpty() && !automaton(b).isEmpty());
    ArrayNode oneOf = JSON.createArrayNode().add(a.schema()).add(b.schema());
    String schema = JSON.createObjectNode().set("oneOf", oneOf).toString();
    if (both.isEmpty()) {
      JsonSchemaGrammar g = compile(schema);
      for (String text : strings()) {
        assertThat(whole(g, "{\"s\": \"" + text + "\"}"))
            .as("%s in %s", text, schema)
            .isEqualTo(a.takes(text) || b.takes(text));
      }
    } else {
      assertRefused(schema, "start with the same character");
    }
  }

  /** The strings of {@code a}, made by the automaton library alone. */
  private static Automaton automaton(Alternative a) {
    Automaton any = Automaton.makeAnyString();
    return (a.pattern() == null ? any : any.intersection(StringPattern.ecma(a.pattern())))
        .intersection(StringPattern.lengths(a.min(), a.max() < 0 ? Integer.MAX_VALUE : a.max()));
  }

  @Provide
  Arbitrary<String> literals() {
    return Arbitraries.of("", "a", "ab", "bbb", "abab");
  }

  @Test
  void aPatternLongerThanItsMostIsRefused() {
    assertRefused(
        "{\"type\": \"string\", \"pattern\": \"^[a-z]{5}$\", \"maxLength\": 3}",
        "no string of at most 3 characters matches pattern ^[a-z]{5}$");
    // Counts past the automaton's cap: refused at once, before any automaton is made.
    assertRefused(
        "{\"type\": \"string\", \"pattern\": \"^[a-z]+$\", \"minLength\": 100000}",
        "pattern ^[a-z]+$: lengths above 4096 are not supported");
    assertRefused(
        "{\"anyOf\": [{\"type\": \"string\", \"format\": \"email\"}, {\"type\": \"string\","
            + " \"format\": \"uri\", \"maxLength\": 9000}]}",
        "format uri: lengths above 4096 are not supported");
    // A maxLength beside a pattern alone is no count in the automaton: any size is served.
    compile("{\"type\": \"string\", \"pattern\": \"^[a-z]+$\", \"maxLength\": 100000}");
  }

  /**
   * Pydantic's datetime | date, and a literal beside a pattern: one string told apart as written.
   */
  @Test
  void formatsAndLiteralsJoinOneString() throws Exception {
    String schema =
        """
        {"anyOf": [{"type": "string", "format": "date-time"}, {"type": "string", "format": "date"},
                   {"const": "never"}, {"type": "string", "pattern": "^[0-9]+ days$"},
                   {"type": "null"}]}""";
    JsonSchemaGrammar g = compile(schema);
    for (String v :
        List.of("\"2026-11-29\"", "\"2026-11-29T06:30:00Z\"", "\"never\"", "\"12 days\"", "null")) {
      assertThat(whole(g, "{\"s\": " + v + "}")).as(v).isTrue();
    }
    for (String v : List.of("\"2026-11-29T\"", "\"nev\"", "\"days\"", "\"2026\"", "\"x\"")) {
      assertThat(whole(g, "{\"s\": " + v + "}")).as(v).isFalse();
    }
    // A oneOf of strings none of which another takes: the same.
    JsonSchemaGrammar one =
        JsonSchemaGrammar.compile(
            "{\"type\": \"object\", \"properties\": {\"s\": {\"oneOf\": [{\"type\": \"string\","
                + " \"format\": \"date\"}, {\"type\": \"string\", \"format\": \"uuid\"}, {\"const\":"
                + " \"today\"}]}}}");
    assertThat(whole(one, "{\"s\": \"2026-11-29\"}")).isTrue();
    assertThat(whole(one, "{\"s\": \"today\"}")).isTrue();
    assertThat(whole(one, "{\"s\": \"123e4567-e89b-12d3-a456-426614174000\"}")).isTrue();
    assertThat(whole(one, "{\"s\": \"tomorrow\"}")).isFalse();
  }

  /** A surrogate pair is one character, as JSON Schema counts them. */
  @Test
  void lengthsCountASurrogatePairAsOneCharacter() {
    JsonSchemaGrammar g =
        JsonSchemaGrammar.compile(
            "{\"type\": \"object\", \"properties\": {\"s\": {\"anyOf\": [{\"type\": \"string\","
                + " \"pattern\": \"^x\", \"minLength\": 2, \"maxLength\": 2}, {\"type\": \"string\","
                + " \"pattern\": \"^y\", \"maxLength\": 3}]}}}");
    assertThat(whole(g, "{\"s\": \"x\uD83D\uDE00\"}")).isTrue();
    assertThat(whole(g, "{\"s\": \"y\uD83D\uDE00\uD83D\uDE00\"}")).isTrue();
    assertThat(prefix(g, "{\"s\": \"y\uD83D\uDE00\uD83D\uDE00\uD83D")).isFalse();
    assertThat(whole(g, "{\"s\": \"x\"}")).isFalse();
  }

  private static JsonSchemaGrammar compile(String schema) {
    return JsonSchemaGrammar.compile(
        "{\"type\": \"object\", \"properties\": {\"s\": " + schema + "}}");
  }

  private static void assertRefused(String schema, String why) {
    assertThatThrownBy(() -> compile(schema)).as(schema).hasMessageContaining(why);
  }
}
