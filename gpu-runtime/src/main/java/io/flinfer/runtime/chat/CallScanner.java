package io.flinfer.runtime.chat;

import java.util.ArrayList;
import java.util.List;

/**
 * The function calls in (a start of) JSON text that a model writes as {@code {"name": NAME, KEY:
 * ARGUMENTS}} objects: each call once its name's string is whole, and its arguments as the text the
 * model wrote so far, without the blanks after them. Read from any start of the text, so that a
 * stream sends each call as soon as its name is known and its arguments as they grow; the pieces
 * add up to what the whole text gives.
 *
 * <p>The call objects sit at a given nesting level: 1 for objects one after another (Llama 3.1's
 * answer, the body of a Hermes {@code <tool_call>} block), 2 for the items of an array (the answer
 * that {@code tool_choice: required} constrains). A call's arguments are the first member named
 * {@code KEY} or {@code arguments} after its name.
 */
public final class CallScanner {
  /**
   * A call so far: its name, its arguments' text ("" before any), and whether they have begun (a
   * value after the member's colon).
   */
  public record Call(String name, String arguments, boolean begun) {
    public ToolCall toolCall() {
      return new ToolCall(null, name, arguments);
    }
  }

  private CallScanner() {}

  /**
   * The calls at nesting {@code level} whose name is whole in {@code text}; {@code key} is the
   * family's arguments member ({@code "arguments"} or {@code "parameters"}).
   */
  public static List<Call> of(String text, String key, int level) {
    List<String> names = new ArrayList<>();
    List<int[]> spans = new ArrayList<>(); // each call's arguments so far: [start, end)
    int depth = 0;
    boolean inString = false;
    boolean escaped = false;
    int stringStart = -1;
    String member = null; // the call object's member being read
    boolean inValue = false; // between a member's ':' and the ',' or '}' after its value
    boolean named = false; // whether the call object being read has its name
    boolean hasArguments = false; // whether it has (begun) its arguments
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
          if (depth == level && args == null) {
            String s = text.substring(stringStart + 1, i);
            if (!inValue) {
              member = s;
            } else if ("name".equals(member) && !named) {
              named = true;
              names.add(s);
              spans.add(new int[] {-1, -1});
            }
          }
        }
        continue;
      }
      if (ch == ' ' || ch == '\n' || ch == '\t' || ch == '\r') {
        continue;
      }
      if (depth == level && (ch == ',' || ch == '}')) {
        inValue = false;
        member = null;
        args = null; // the arguments, if these were they, ended before this
      } else if (args != null) {
        args[1] = i + 1;
      } else if (depth == level
          && inValue
          && named
          && !hasArguments
          && (key.equals(member) || "arguments".equals(member))) {
        hasArguments = true;
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
          if (++depth == level) {
            named = false; // a call object opens
            hasArguments = false;
          }
        }
        case '}', ']' -> depth--;
        case ':' -> inValue = depth == level;
        default -> {}
      }
    }
    List<Call> calls = new ArrayList<>();
    for (int c = 0; c < names.size(); c++) {
      int[] span = spans.get(c);
      boolean begun = span[0] >= 0;
      calls.add(new Call(names.get(c), begun ? text.substring(span[0], span[1]) : "", begun));
    }
    return calls;
  }
}
