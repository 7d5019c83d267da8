package io.flinfer.runtime.grammar;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.async.ByteArrayFeeder;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Assume;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

class JsonPrefixTest {
  private static final JsonFactory JSON = new JsonFactory();

  /** How many leading bytes {@link JsonPrefix} takes; the whole length when it takes all. */
  private static int accepted(byte[] b) {
    JsonPrefix p = new JsonPrefix();
    for (int i = 0; i < b.length; i++) {
      if (!p.accept(b[i])) {
        return i;
      }
    }
    return b.length;
  }

  private static int accepted(String s) {
    return accepted(s.getBytes(StandardCharsets.UTF_8));
  }

  private static boolean complete(byte[] b) {
    JsonPrefix p = new JsonPrefix();
    return p.accept(b, 0, b.length) && p.isComplete();
  }

  private static boolean complete(String s) {
    return complete(s.getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void takesObjectsWholeAndCompletesAtTheirEnd() {
    for (String s :
        List.of(
            "{}",
            "\n{ }",
            "{\"a\":1}",
            "{\"a\" : [1, -2.5e+3, 0, 0.0, 1E9, true, false, null, \"x\"], \"b\": {}}",
            "{\"k\":\"\\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\uD83D\\uDE00\"}",
            "{\"\u00e9\u65e5\ud83d\ude00\":[[],[[]],{}]}",
            "{\"a\":[{\"b\":[{\"c\":-0.5e-7}]}]}")) {
      assertThat(accepted(s)).as(s).isEqualTo(s.getBytes(StandardCharsets.UTF_8).length);
      assertThat(complete(s)).as(s).isTrue();
      byte[] b = s.getBytes(StandardCharsets.UTF_8);
      JsonPrefix p = new JsonPrefix();
      for (int i = 0; i < b.length - 1; i++) {
        p.accept(b[i]);
        assertThat(p.isComplete()).as("%s after %d bytes", s, i + 1).isFalse();
      }
    }
  }

  @Test
  void stopsAtTheFirstByteThatCannotFollow() {
    Map<String, Integer> cases = new LinkedHashMap<>();
    cases.put("[1]", 0); // the root is an object
    cases.put("\"a\"", 0);
    cases.put("{}x", 2); // nothing after the root
    cases.put("{} ", 2);
    cases.put("{\"a\":01}", 6); // no leading zeros
    cases.put("{\"a\":-}", 6);
    cases.put("{\"a\":1.}", 7);
    cases.put("{\"a\":1e}", 7);
    cases.put("{\"a\":+1}", 5);
    cases.put("{\"a\":tru}", 8);
    cases.put("{\"a\":nul1}", 8);
    cases.put("{\"a\":1,}", 7);
    cases.put("{,}", 1);
    cases.put("{\"a\" 1}", 5);
    cases.put("{\"a\":1]", 6);
    cases.put("{\"a\":[1}", 7);
    cases.put("{a:1}", 1);
    cases.put("{\"a\":\"\\x\"}", 7);
    cases.put("{\"a\":\"\\u12g4\"}", 10);
    cases.put("{\"a\":\"\t\"}", 6); // raw control characters are escaped in JSON
    for (Map.Entry<String, Integer> c : cases.entrySet()) {
      assertThat(accepted(c.getKey())).as(c.getKey()).isEqualTo(c.getValue());
    }
  }

  @Test
  void takesOnlyWellFormedUtf8InStrings() {
    byte[] head = "{\"a\":\"".getBytes(StandardCharsets.US_ASCII);
    int[][] bad = {
      {0xc0, 0x80}, // overlong
      {0xc1, 0xbf},
      {0xe0, 0x80, 0x80}, // overlong
      {0xed, 0xa0, 0x80}, // a surrogate
      {0xf0, 0x80, 0x80, 0x80}, // overlong
      {0xf4, 0x90, 0x80, 0x80}, // above U+10FFFF
      {0xf5},
      {0x80}, // a continuation byte first
      {0xc3, 0x41} // a character cut short
    };
    for (int[] seq : bad) {
      byte[] b = new byte[head.length + seq.length];
      System.arraycopy(head, 0, b, 0, head.length);
      for (int i = 0; i < seq.length; i++) {
        b[head.length + i] = (byte) seq[i];
      }
      assertThat(accepted(b)).isLessThan(b.length);
    }
    assertThat(complete("{\"a\":\"\u00ff\u0800\uffff\ud800\udc00\udbff\udfff\"}")).isTrue();
  }

  @Test
  void limitsNestingAndWhitespaceRuns() {
    String deep = "{\"a\":" + "[".repeat(JsonPrefix.MAX_DEPTH - 1);
    assertThat(accepted(deep)).isEqualTo(deep.length());
    assertThat(accepted(deep + "[")).isEqualTo(deep.length());
    String spaced = "{" + " ".repeat(JsonPrefix.MAX_WHITESPACE) + "}";
    assertThat(complete(spaced)).isTrue();
    String tooSpaced = "{" + " ".repeat(JsonPrefix.MAX_WHITESPACE + 1) + "}";
    assertThat(accepted(tooSpaced)).isEqualTo(1 + JsonPrefix.MAX_WHITESPACE);
    assertThat(accepted("  {}")).isEqualTo(JsonPrefix.MAX_LEADING_WHITESPACE);
    // Before a value, in an array, and after one alike.
    for (String head : new String[] {"{\"a\":", "{\"a\":[", "{\"a\":[1"}) {
      String run = head + " ".repeat(JsonPrefix.MAX_WHITESPACE + 1);
      assertThat(accepted(run)).as(head).isEqualTo(run.length() - 1);
    }
  }

  @Property(tries = 300)
  void takesWhatJacksonWrites(@ForAll("objects") Map<String, Object> value, @ForAll boolean pretty)
      throws IOException {
    ObjectMapper mapper = new ObjectMapper();
    if (pretty) {
      mapper.enable(SerializationFeature.INDENT_OUTPUT);
    }
    byte[] b = mapper.writeValueAsBytes(value);
    assertThat(accepted(b)).isEqualTo(b.length);
    assertThat(complete(b)).isTrue();
  }

  /**
   * Jackson's incremental parser as the reference, on byte strings made of JSON's own characters:
   * every prefix this class takes, Jackson takes too; a prefix it calls complete is one object to
   * Jackson; and every prefix that Jackson reads as one whole object, this class takes and calls
   * complete.
   */
  @Property(tries = 2000)
  void agreesWithJacksonOnEveryPrefix(@ForAll("jsonish") String text) throws IOException {
    // Whitespace runs past the limit are JSON that this class refuses on purpose.
    Assume.that(!text.matches("(?s).*[ \n]{" + (JsonPrefix.MAX_WHITESPACE + 1) + ",}.*"));
    byte[] b = text.getBytes(StandardCharsets.UTF_8);
    int ours = accepted(b);
    // Jackson may notice a wrong byte only after reading what follows it.
    assertThat(jacksonAccepts(b)).as(text).isGreaterThanOrEqualTo(ours);
    for (int n = 0; n <= b.length; n++) {
      byte[] prefix = java.util.Arrays.copyOf(b, n);
      assertThat(complete(prefix)).as("%s, %d bytes", text, n).isEqualTo(closesRootAt(b, n));
    }
  }

  /** How many leading bytes Jackson reads without an error (all of them when none). */
  private static int jacksonAccepts(byte[] b) throws IOException {
    for (int n = 0; n <= b.length; n++) {
      if (!jacksonTakes(b, n)) {
        return n - 1;
      }
    }
    return b.length;
  }

  private static boolean jacksonTakes(byte[] b, int n) throws IOException {
    try (JsonParser parser = JSON.createNonBlockingByteArrayParser()) {
      ((ByteArrayFeeder) parser.getNonBlockingInputFeeder()).feedInput(b, 0, n);
      while (parser.nextToken() != JsonToken.NOT_AVAILABLE) {
        if (parser.currentToken() == null) {
          return true;
        }
      }
      return true;
    } catch (JsonProcessingException e) {
      return false;
    }
  }

  /** Whether Jackson reads {@code b[0..n)} as one object ending at byte n. */
  private static boolean closesRootAt(byte[] b, int n) throws IOException {
    try (JsonParser parser = JSON.createNonBlockingByteArrayParser()) {
      ByteArrayFeeder feeder = (ByteArrayFeeder) parser.getNonBlockingInputFeeder();
      feeder.feedInput(b, 0, n);
      feeder.endOfInput();
      JsonToken first = parser.nextToken();
      parser.skipChildren();
      return first == JsonToken.START_OBJECT
          && parser.currentToken() == JsonToken.END_OBJECT
          && parser.nextToken() == null;
    } catch (JsonProcessingException e) {
      return false;
    }
  }

  @Provide
  Arbitrary<String> jsonish() {
    List<String> pieces =
        new ArrayList<>(
            List.of(
                "{", "}", "[", "]", ":", ",", "\"", "\"a\"", "\"b\":", " ", "\n", "0", "1", "9",
                "-", ".", "e", "E", "+", "true", "false", "null", "tr", "nul", "\\", "\\n", "\\u",
                "00e9", "x", "\u00e9", "{\"k\":", "[1,", "1.5", "-0"));
    return Arbitraries.of(pieces)
        .list()
        .ofMinSize(1)
        .ofMaxSize(24)
        .map(l -> (l.get(0).equals("{") ? "" : "{") + String.join("", l));
  }

  @Provide
  Arbitrary<Map<String, Object>> objects() {
    return objectsOf(3);
  }

  private static Arbitrary<Map<String, Object>> objectsOf(int depth) {
    return Arbitraries.maps(Arbitraries.strings().ofMaxLength(6), valuesOf(depth)).ofMaxSize(4);
  }

  private static Arbitrary<Object> valuesOf(int depth) {
    List<Arbitrary<? extends Object>> leaves =
        List.of(
            Arbitraries.strings().all().ofMaxLength(8),
            Arbitraries.integers(),
            Arbitraries.doubles(),
            Arbitraries.of(true, false),
            Arbitraries.just(null));
    if (depth == 0) {
      return Arbitraries.oneOf(leaves);
    }
    List<Arbitrary<? extends Object>> all = new ArrayList<>(leaves);
    all.add(objectsOf(depth - 1));
    all.add(Arbitraries.lazy(() -> valuesOf(depth - 1)).list().ofMaxSize(3));
    return Arbitraries.oneOf(all);
  }
}
