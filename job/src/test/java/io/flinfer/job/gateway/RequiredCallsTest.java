package io.flinfer.job.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

class RequiredCallsTest {
  @Test
  void callsAreReadAsTheModelWroteThem() {
    String text =
        "[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris, \\\"FR\\\"}\", \"days\": [1,"
            + " 2]}} ,\n {\"name\":\"now\",\"arguments\":{}}]";
    assertThat(RequiredCalls.of(text, "arguments"))
        .containsExactly(
            new RequiredCalls.Call(
                "get_weather", "{\"city\": \"Paris, \\\"FR\\\"}\", \"days\": [1, 2]}"),
            new RequiredCalls.Call("now", "{}"));
    // Llama 3's form names them parameters.
    assertThat(RequiredCalls.of("[{\"name\": \"f\", \"parameters\": {\"a\": 1}}]", "parameters"))
        .containsExactly(new RequiredCalls.Call("f", "{\"a\": 1}"));
    // A start: the name once its string is whole; the arguments without the blanks after them.
    assertThat(RequiredCalls.of("[{\"name\": \"get_wea", "arguments")).isEmpty();
    assertThat(RequiredCalls.of("[{\"name\": \"get_weather\", \"argu", "arguments"))
        .containsExactly(new RequiredCalls.Call("get_weather", ""));
    assertThat(
            RequiredCalls.of("[{\"name\": \"f\", \"arguments\": {\"a\": \"x \"} \n", "arguments"))
        .containsExactly(new RequiredCalls.Call("f", "{\"a\": \"x \"}"));
  }

  /**
   * For any calls, laid out with any blanks: the whole answer gives them exactly, and every start
   * of it gives a start of them (names whole, arguments a prefix of each call's), growing with the
   * start, so that a stream's pieces add up to the whole answer's calls.
   */
  @Property(tries = 1000)
  void everyStartOfAnAnswerGivesAStartOfItsCalls(
      @ForAll long seed, @ForAll @IntRange(min = 1, max = 3) int count) {
    Random rnd = new Random(seed);
    List<RequiredCalls.Call> calls = new ArrayList<>();
    StringBuilder text = new StringBuilder("[");
    for (int c = 0; c < count; c++) {
      String name = List.of("get_weather", "now", "f-2").get(rnd.nextInt(3));
      String arguments = value(rnd, 0);
      calls.add(new RequiredCalls.Call(name, arguments));
      text.append(c == 0 ? blanks(rnd) : blanks(rnd) + "," + blanks(rnd));
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
    text.append(blanks(rnd)).append("]");
    assertThat(RequiredCalls.of(text.toString(), "arguments")).isEqualTo(calls);
    List<RequiredCalls.Call> before = List.of();
    for (int end = 0; end <= text.length(); end++) {
      List<RequiredCalls.Call> now = RequiredCalls.of(text.substring(0, end), "arguments");
      assertThat(now.size())
          .isLessThanOrEqualTo(calls.size())
          .isGreaterThanOrEqualTo(before.size());
      for (int k = 0; k < now.size(); k++) {
        assertThat(now.get(k).name()).isEqualTo(calls.get(k).name());
        assertThat(calls.get(k).arguments()).startsWith(now.get(k).arguments());
        if (k < before.size()) {
          assertThat(now.get(k).arguments()).startsWith(before.get(k).arguments());
        }
      }
      before = now;
    }
  }

  /** {@code "key": value}, with blanks around the colon. */
  private static String member(Random rnd, String key, String value) {
    return '"' + key + '"' + blanks(rnd) + ":" + blanks(rnd) + value;
  }

  private static String blanks(Random rnd) {
    return List.of("", "", " ", "\n", " \n  ").get(rnd.nextInt(5));
  }

  /** A JSON value with blanks between its tokens, and strings holding JSON's own characters. */
  private static String value(Random rnd, int depth) {
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
        {
          StringBuilder o = new StringBuilder("{");
          int n = rnd.nextInt(3);
          for (int i = 0; i < n; i++) {
            o.append(i == 0 ? blanks(rnd) : blanks(rnd) + "," + blanks(rnd))
                .append(member(rnd, "k" + i, value(rnd, depth + 1)));
          }
          return o.append(blanks(rnd)).append("}").toString();
        }
    }
  }
}
