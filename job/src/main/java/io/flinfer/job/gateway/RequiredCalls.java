package io.flinfer.job.gateway;

import io.flinfer.runtime.chat.ToolCall;
import java.util.ArrayList;
import java.util.List;

/**
 * The calls in (a start of) an answer that {@code tool_choice: required} constrained to an array of
 * {@code {"name": NAME, KEY: ARGUMENTS}} objects: each call's name once its string is whole, and
 * its arguments as the text the model wrote so far, without the blanks after them. Read from any
 * start of the answer, so that a stream sends each call as soon as its name is known and its
 * arguments as they grow; the pieces add up to what the whole answer gives.
 */
final class RequiredCalls {
  /** A call so far: its arguments' text ("" before any). */
  record Call(String name, String arguments) {
    ToolCall toolCall() {
      return new ToolCall(null, name, arguments);
    }
  }

  private RequiredCalls() {}

  /**
   * The calls whose name is whole in {@code text}, a start of an array that the schema allows;
   * {@code key} is the family's arguments member ({@code "arguments"} or {@code "parameters"}).
   */
  static List<Call> of(String text, String key) {
    List<String> names = new ArrayList<>();
    List<int[]> spans = new ArrayList<>(); // each call's arguments so far: [start, end)
    int depth = 0;
    boolean inString = false;
    boolean escaped = false;
    int stringStart = -1;
    String member = null; // the call object's member being read
    boolean inValue = false; // between a member's ':' and the ',' or '}' after its value
    boolean named = false; // whether the call object being read has its name
    int[] args = null; // the arguments being read, or null
    for (int i = 0; i < text.length(); i++) {
      char ch = text.charAt(i);
      if (inString) {
        if (args != null) {
          args[1] = i + 1;
        }
        if (escaped) {
          escaped = false;
        } else if (ch == '\\') {
          escaped = true;
        } else if (ch == '"') {
          inString = false;
          if (depth == 2 && args == null) {
            String s = text.substring(stringStart + 1, i);
            if (!inValue) {
              member = s;
            } else if ("name".equals(member) && !named) {
              named = true;
              names.add(s);
              spans.add(new int[] {0, 0});
            }
          }
        }
        continue;
      }
      if (ch == ' ' || ch == '\n' || ch == '\t' || ch == '\r') {
        continue;
      }
      if (depth == 2 && (ch == ',' || ch == '}')) {
        inValue = false;
        member = null;
        args = null; // the arguments, if these were they, ended before this
      } else if (args != null) {
        args[1] = i + 1;
      } else if (depth == 2 && inValue && named && key.equals(member)) {
        args = spans.get(spans.size() - 1);
        args[0] = i;
        args[1] = i + 1;
      }
      switch (ch) {
        case '"' -> {
          inString = true;
          stringStart = i;
        }
        case '{', '[' -> {
          if (++depth == 2) {
            named = false; // a call object opens
          }
        }
        case '}', ']' -> depth--;
        case ':' -> inValue = depth == 2;
        default -> {}
      }
    }
    List<Call> calls = new ArrayList<>();
    for (int c = 0; c < names.size(); c++) {
      int[] span = spans.get(c);
      calls.add(new Call(names.get(c), text.substring(span[0], span[1])));
    }
    return calls;
  }
}
