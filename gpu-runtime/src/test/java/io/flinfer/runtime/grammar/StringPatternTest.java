package io.flinfer.runtime.grammar;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import java.time.LocalDate;
import java.time.OffsetDateTime;
import java.util.UUID;
import java.util.regex.Pattern;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

/** A string's pattern and format, as a schema's strings keep them. */
class StringPatternTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  private static boolean takes(String keyword, String value, String text) throws Exception {
    JsonSchemaGrammar g =
        JsonSchemaGrammar.compile(
            "{\"type\": \"object\", \"properties\": {\"s\": {\"type\": \"string\", \""
                + keyword
                + "\": "
                + JSON.writeValueAsString(value)
                + "}}}");
    byte[] b = ("{\"s\":" + JSON.writeValueAsString(text) + "}").getBytes(StandardCharsets.UTF_8);
    SchemaPrefix p = g.start();
    return p.accept(b, 0, b.length) && p.isComplete();
  }

  @Provide
  Arbitrary<String> patterns() {
    return Arbitraries.of(
        "^[a-z]+$",
        "a+b",
        "^\\d{3}-\\d{2}$",
        "colou?r",
        "^(?:ab|cd)*$",
        "\\w+@\\w+\\.co",
        "^[^\\s]{2,5}$",
        "x.y",
        "^\\u00e9+",
        "^[A-Z][a-z]*(?: [A-Z][a-z]*)*$",
        "^.{3}$",
        "[0-9]+$",
        "^\\$\\d+",
        "\"|\\\\",
        "^a*?b+?$",
        "[-.]");
  }

  @Provide
  Arbitrary<String> texts() {
    return Arbitraries.strings().withChars("abcdrxyABCZ019-@.$ é\n\"\\").ofMaxLength(8);
  }

  /** Escapes, multi-byte characters and JSON escapes alike: as Java's regex finds the pattern. */
  @Property(tries = 600)
  void patternsMatchWhereJavasRegexFindsThem(
      @ForAll("patterns") String pattern, @ForAll("texts") String text) throws Exception {
    // ECMA's $ (without the multiline flag) is the very end; Java's would also match before a
    // final line break.
    String java =
        pattern.endsWith("$") ? pattern.substring(0, pattern.length() - 1) + "\\z" : pattern;
    assertThat(takes("pattern", pattern, text))
        .as("%s against %s", pattern, JSON.writeValueAsString(text))
        .isEqualTo(Pattern.compile(java).matcher(text).find());
  }

  @Test
  void formatsTakeWhatTheirRfcsAllowAndNoMore() throws Exception {
    assertThat(takes("format", "date", "2024-02-28")).isTrue();
    assertThat(takes("format", "date", "2024-02-30")).isFalse();
    assertThat(takes("format", "date", "2024-04-31")).isFalse();
    assertThat(takes("format", "date-time", "2024-12-31T23:59:59.5+01:00")).isTrue();
    assertThat(takes("format", "date-time", "2024-12-31 23:59:59Z")).isFalse();
    assertThat(takes("format", "date-time", "2024-12-31T23:59:59+00:00")).isTrue();
    assertThat(takes("format", "date-time", "2024-12-31T23:59:59-00:00")).isFalse();
    assertThat(takes("format", "email", "ann@mail.example.zz")).isFalse(); // no such domain
    assertThat(takes("format", "time", "24:00:00Z")).isFalse();
    assertThat(takes("format", "uuid", UUID.randomUUID().toString())).isTrue();
    assertThat(takes("format", "ipv4", "192.168.0.255")).isTrue();
    assertThat(takes("format", "ipv4", "192.168.0.256")).isFalse();
    assertThat(takes("format", "email", "ann.lee+x@mail.example.org")).isTrue();
    assertThat(takes("format", "email", ".ann@example.org")).isFalse();
    assertThat(takes("format", "email", "ann@localhost")).isFalse();
    assertThat(takes("format", "email", "a".repeat(21) + "@example.org")).isFalse();
    assertThat(takes("format", "hostname", "api.example-1.org")).isTrue();
    assertThat(takes("format", "hostname", "-bad.org")).isFalse();
    assertThat(takes("format", "hostname", "a." + "b".repeat(64) + ".org")).isFalse();
    assertThat(takes("format", "uri", "https://example.org:8443/a/b_c.d?x=1&y=2")).isTrue();
    assertThat(takes("format", "uri", "http://example.org")).isTrue();
    assertThat(takes("format", "uri", "ftp://example.org")).isFalse();
    assertThat(takes("format", "uri", "https://example.org/a b")).isFalse();
    assertThat(takes("format", "duration", "P3DT4H5M6S")).isTrue();
    assertThat(takes("format", "duration", "PT90M")).isTrue();
    assertThat(takes("format", "duration", "P")).isFalse();
    assertThat(takes("format", "duration", "PT")).isFalse();
    assertThat(takes("format", "duration", "PT1H5S")).isFalse(); // RFC 3339 wants the minutes
    assertThat(takes("format", "ipv6", "2001:db8:0:0:0:0:2:1")).isTrue();
    assertThat(takes("format", "ipv6", "2001:db8::2:1")).isFalse(); // full form only
    assertThat(takes("format", "byte", "aGk=")).isTrue();
    assertThat(takes("format", "byte", "aGk")).isFalse();
    assertThat(takes("format", "json-pointer", "/a~1b/0")).isTrue();
    assertThat(takes("format", "json-pointer", "a/b")).isFalse();
    assertThat(takes("format", "password", "any thing\n")).isTrue();
    assertThat(takes("format", "uri-reference", "https://example.org/x")).isTrue();
    assertThat(takes("format", "idn-email", "ann@example.org")).isTrue();
    // Every date the automaton takes is a real date, and every date-time an RFC 3339 one.
    for (int m = 1; m <= 12; m++) {
      for (int d = 26; d <= 31; d++) {
        String text = String.format("2023-%02d-%02d", m, d);
        if (takes("format", "date", text)) {
          assertThat(LocalDate.parse(text)).isNotNull();
          assertThat(OffsetDateTime.parse(text + "T10:00:00Z")).isNotNull();
        }
      }
    }
  }

  /**
   * What the automata of durations, IPv6 addresses and base64 take, Java's own readers read: random
   * walks through each automaton's accepted strings.
   */
  @Property(tries = 200)
  void durationsAddressesAndBase64ReadAsJavaReadsThem(@ForAll long seed) throws Exception {
    java.util.Random r = new java.util.Random(seed);
    for (String format : java.util.List.of("duration", "ipv6", "byte")) {
      String text = walk(format, r);
      switch (format) {
        case "duration" -> assertThat(java.time.Duration.parse(text)).as(text).isNotNull();
        case "ipv6" ->
            assertThat(java.net.InetAddress.getByName(text))
                .as(text)
                .isInstanceOf(java.net.Inet6Address.class);
        default -> assertThat(java.util.Base64.getDecoder().decode(text)).as(text).isNotNull();
      }
    }
  }

  /** A string of {@code format} drawn character by character from what its automaton takes. */
  private static String walk(String format, java.util.Random r) {
    StringPattern p =
        StringPattern.of(
            java.util.List.of(StringPattern.Part.of(null, format, 0, Integer.MAX_VALUE)));
    String alphabet = "0123456789abcdefABCDEFPTDHMSxyz+/=:.";
    StringBuilder text = new StringBuilder();
    int state = p.start();
    while (true) {
      java.util.List<Character> next = new java.util.ArrayList<>();
      for (char c : alphabet.toCharArray()) {
        if (p.step(state, c) >= 0) {
          next.add(c);
        }
      }
      if (p.accepts(state) && (next.isEmpty() || r.nextInt(4) == 0)) {
        return text.toString();
      }
      char c = next.get(r.nextInt(next.size()));
      text.append(c);
      state = p.step(state, c);
    }
  }

  @Test
  void whatCannotBeAnAutomatonIsRefusedByName() {
    String[][] cases = {
      {"pattern", "(?=a)b", "lookaround"},
      {"pattern", "(a)\\1", "back-references"},
      {"pattern", "\\bword", "word boundaries"},
      {"pattern", "a^b", "anchors inside"},
      {"pattern", "[a-", "pattern [a- is not supported"},
      {"format", "regex", "format regex is not supported (supported: "},
      // 2^31 states as a deterministic automaton: refused at the cap, at once.
      {"pattern", "a.{30}", "pattern a.{30}: its automaton needs more than 4096 states"},
    };
    assertThatThrownBy(
            () ->
                JsonSchemaGrammar.compile(
                    "{\"type\": \"object\", \"properties\": {\"s\": {\"type\": \"string\","
                        + " \"pattern\": \"^x$\", \"format\": \"date\"}}}"))
        .hasMessage("json_schema at #/properties/s/pattern: pattern ^x$: no string matches it");
    for (String[] c : cases) {
      assertThatThrownBy(() -> takes(c[0], c[1], "x"))
          .as(c[1])
          .hasMessageStartingWith("json_schema at #/properties/s/" + c[0] + ": ")
          .hasMessageContaining(c[2]);
    }
  }

  /**
   * No dead ends: byte by byte (multi-byte characters, escapes and \\u escapes included), whatever
   * was taken, some byte can always follow until the value is complete.
   */
  @Property(tries = 200)
  void everyByteTakenLeavesAWayOn(@ForAll("patterns") String pattern, @ForAll long seed)
      throws Exception {
    JsonSchemaGrammar g =
        JsonSchemaGrammar.compile(
            "{\"type\": \"object\", \"properties\": {\"s\": {\"type\": \"string\","
                + " \"pattern\": "
                + JSON.writeValueAsString(pattern)
                + "}, \"d\": {\"type\": \"string\", \"format\": \"date\"}}}");
    java.util.Random random = new java.util.Random(seed);
    SchemaPrefix state = g.start();
    SchemaPrefix probe = g.start();
    for (int step = 0; step < 80 && !state.isComplete(); step++) {
      java.util.List<Integer> next = new java.util.ArrayList<>();
      for (int b = 0; b < 256; b++) {
        probe.copyFrom(state);
        if (probe.accept((byte) b)) {
          next.add(b);
        }
      }
      assertThat(next).as("%s, step %d", pattern, step).isNotEmpty();
      // Prefer what closes and what starts escapes or multi-byte characters.
      java.util.List<Integer> pick = new java.util.ArrayList<>(next);
      pick.removeIf(b -> random.nextInt(3) != 0 && b != '"' && b != '\\' && b < 0x80);
      int b =
          (pick.isEmpty() ? next : pick).get(random.nextInt((pick.isEmpty() ? next : pick).size()));
      assertThat(state.accept((byte) b)).isTrue();
    }
  }
}
