package io.flinfer.runtime.chat;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

class CallScannerTest {
  @Test
  void callsAreReadAsTheModelWroteThem() {
    String text =
        "[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris, \\\"FR\\\"}\", \"days\": [1,"
            + " 2]}} ,\n {\"name\":\"now\",\"arguments\":{}}]";
    assertThat(CallScanner.of(text, "arguments", 2))
        .containsExactly(
            call("get_weather", "{\"city\": \"Paris, \\\"FR\\\"}\", \"days\": [1, 2]}"),
            call("now", "{}"));
    // Llama 3's form names them parameters; objects one after another are level 1.
    assertThat(CallScanner.of("[{\"name\": \"f\", \"parameters\": {\"a\": 1}}]", "parameters", 2))
        .containsExactly(call("f", "{\"a\": 1}"));
    assertThat(
            CallScanner.of(
                "<|python_tag|>{\"name\": \"f\", \"parameters\": {\"a\": 1}}; {\"name\": \"g\","
                    + " \"arguments\": \"{}\"}",
                "parameters",
                1))
        .containsExactly(call("f", "{\"a\": 1}"), call("g", "\"{}\""));
    // A start: the name once its string is whole; the arguments without the blanks after them.
    assertThat(CallScanner.of("[{\"name\": \"get_wea", "arguments", 2)).isEmpty();
    assertThat(CallScanner.of("[{\"name\": \"get_weather\", \"argu", "arguments", 2))
        .containsExactly(new CallScanner.Call("get_weather", "", false));
    assertThat(
            CallScanner.of("[{\"name\": \"f\", \"arguments\": {\"a\": \"x \"} \n", "arguments", 2))
        .containsExactly(call("f", "{\"a\": \"x \"}"));
    // Only the first arguments member counts.
    assertThat(
            CallScanner.of(
                "{\"name\": \"f\", \"arguments\": {}, \"arguments\": []}", "arguments", 1))
        .containsExactly(call("f", "{}"));
  }

  private static CallScanner.Call call(String name, String arguments) {
    return new CallScanner.Call(name, arguments, true);
  }

  /**
   * For any calls, laid out with any blanks, in an array or one after another: the whole text gives
   * them exactly, and every start of it gives a start of them (names whole, arguments a prefix of
   * each call's), growing with the start, so that a stream's pieces add up to the whole text's
   * calls.
   */
  @Property(tries = 1000)
  void everyStartOfAnAnswerGivesAStartOfItsCalls(
      @ForAll long seed, @ForAll @IntRange(min = 1, max = 3) int count, @ForAll boolean inArray) {
    Random rnd = new Random(seed);
    List<CallScanner.Call> calls = new ArrayList<>();
    StringBuilder text = new StringBuilder(inArray ? "[" : "");
    String separator = inArray ? "," : ";";
    for (int c = 0; c < count; c++) {
      String name = List.of("get_weather", "now", "f-2").get(rnd.nextInt(3));
      String arguments = value(rnd, 0);
      calls.add(call(name, arguments));
      text.append(c == 0 ? blanks(rnd) : blanks(rnd) + separator + blanks(rnd));
      text.append("{")
          .append(blanks(rnd))
          .append(member(rnd, "name", '"' + name + '"'))
          .append(blanks(rnd))
          .append(",")
          .append(blanks(rnd))
          .append(member(rnd, "arguments", arguments))
          .append(blanks(rnd))
          .append("}");
    }
    text.append(blanks(rnd)).append(inArray ? "]" : "");
    int level = inArray ? 2 : 1;
    assertThat(CallScanner.of(text.toString(), "arguments", level)).isEqualTo(calls);
    List<CallScanner.Call> before = List.of();
    for (int end = 0; end <= text.length(); end++) {
      List<CallScanner.Call> now = CallScanner.of(text.substring(0, end), "arguments", level);
      assertThat(now.size())
          .isLessThanOrEqualTo(calls.size())
          .isGreaterThanOrEqualTo(before.size());
      for (int k = 0; k < now.size(); k++) {
        assertThat(now.get(k).name()).isEqualTo(calls.get(k).name());
        assertThat(calls.get(k).arguments()).startsWith(now.get(k).arguments());
        if (k < before.size()) {
          assertThat(now.get(k).arguments()).startsWith(before.get(k).arguments());
          assertThat(now.get(k).begun() || !before.get(k).begun()).isTrue();
        }
      }
      before = now;
    }
  }

  /** {@code "key": value}, with blanks around the colon. */
  static String member(Random rnd, String key, String value) {
    return '"' + key + '"' + blanks(rnd) + ":" + blanks(rnd) + value;
  }

  static String blanks(Random rnd) {
    return List.of("", "", " ", "\n", " \n  ").get(rnd.nextInt(5));
  }

  /** A JSON value with blanks between its tokens, and strings holding JSON's own characters. */
  static String value(Random rnd, int depth) {
    int kind = rnd.nextInt(depth >= 2 ? 4 : 6);
    switch (kind) {
      case 0:
        return String.valueOf(rnd.nextInt(1000) - 500);
      case 1:
        return List.of("true", "false", "null").get(rnd.nextInt(3));
      case 2:
      case 3:
        return '"'
            + List.of("", "Paris", "a, b}", "\\\"q\\\"", "x\\\\", "[{:}]", " ").get(rnd.nextInt(7))
            + '"';
      case 4:
        {
          StringBuilder a = new StringBuilder("[");
          int n = rnd.nextInt(3);
          for (int i = 0; i < n; i++) {
            a.append(i == 0 ? blanks(rnd) : blanks(rnd) + "," + blanks(rnd))
                .append(value(rnd, depth + 1));
          }
          return a.append(blanks(rnd)).append("]").toString();
        }
      default:
        return object(rnd, depth);
    }
  }

  /** A JSON object of such values. */
  static String object(Random rnd, int depth) {
    StringBuilder o = new StringBuilder("{");
    int n = rnd.nextInt(3);
    for (int i = 0; i < n; i++) {
      o.append(i == 0 ? blanks(rnd) : blanks(rnd) + "," + blanks(rnd))
          .append(member(rnd, "k" + i, value(rnd, depth + 1)));
    }
    return o.append(blanks(rnd)).append("}").toString();
  }
}
