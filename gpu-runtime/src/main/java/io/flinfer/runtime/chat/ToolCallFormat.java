package io.flinfer.runtime.chat;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * How a model family writes the function calls its chat template taught it, read from the template:
 * Qwen's and Hermes' {@code <tool_call>} blocks, or Llama 3.1's bare JSON answer. Reads calls back
 * out of an answer's text, and says while an answer streams from where its text may be a call, so
 * that only text that is surely content goes out as content.
 */
public enum ToolCallFormat {
  /**
   * Text, then one or more {@code <tool_call>\n{"name": ..., "arguments": {...}}\n</tool_call>}
   * blocks (Qwen 2.5, Qwen 3, Hermes).
   */
  HERMES("arguments"),
  /**
   * The whole answer is {@code {"name": ..., "parameters": {...}}}, several separated by {@code ;}
   * (Llama 3.1 to 3.3 with custom tools).
   */
  LLAMA3_JSON("parameters"),
  /** The template takes tools in a form not read back here: answers are content. */
  UNKNOWN("arguments");

  private static final String OPEN = "<tool_call>";
  private static final String CLOSE = "</tool_call>";
  private static final String PYTHON_TAG = "<|python_tag|>";
  private static final ObjectMapper JSON = new ObjectMapper();

  private final String argumentsKey;

  ToolCallFormat(String argumentsKey) {
    this.argumentsKey = argumentsKey;
  }

  /** The format {@code template} teaches, from the text it writes around calls. */
  public static ToolCallFormat of(ChatTemplate template) {
    String s = template.source();
    if (s.contains(OPEN)) {
      return HERMES;
    }
    if (s.contains("\"parameters\"") || s.contains("\\\"parameters\\\"")) {
      return LLAMA3_JSON;
    }
    return UNKNOWN;
  }

  /** The key under which the family writes a call's arguments. */
  public String argumentsKey() {
    return argumentsKey;
  }

  /** An answer read back: its content (null if none) and its calls (ids unset), in order. */
  public record Answer(String content, List<ToolCall> calls) {}

  /**
   * The calls in {@code text}, and the text around them as content. Text whose calls do not read as
   * JSON objects with a name and arguments is all content, as the model wrote it. A call's
   * arguments are the text the model wrote (an object), or the string it wrote them as.
   */
  public Answer parse(String text) {
    return parse(text, false);
  }

  /**
   * As {@link #parse(String)}; an answer {@code cutShort} by the token limit whose calls do not
   * read whole gives the calls it has begun, as far as they got ({@link #callsSoFar}), as a stream
   * gave them.
   */
  public Answer parse(String text, boolean cutShort) {
    Answer whole = wholeCalls(text);
    if (!cutShort || !whole.calls().isEmpty()) {
      return whole;
    }
    List<ToolCall> soFar = callsSoFar(text);
    if (soFar.isEmpty()) {
      return whole;
    }
    String content = this == HERMES ? text.substring(0, holdFrom(text)).strip() : "";
    return new Answer(content.isEmpty() ? null : content, soFar);
  }

  private Answer wholeCalls(String text) {
    List<ToolCall> calls = new ArrayList<>();
    switch (this) {
      case HERMES -> {
        // The blocks are calls; the text outside them is content.
        StringBuilder content = new StringBuilder();
        int at = 0;
        for (int open = text.indexOf(OPEN); open >= 0; open = text.indexOf(OPEN, at)) {
          content.append(text, at, open);
          int close = text.indexOf(CLOSE, open);
          int bodyEnd = close < 0 ? text.length() : close;
          ToolCall c = call(text.substring(open + OPEN.length(), bodyEnd).strip());
          if (c == null) {
            return new Answer(text, List.of());
          }
          calls.add(c);
          at = close < 0 ? text.length() : close + CLOSE.length();
        }
        if (calls.isEmpty()) {
          return new Answer(text, List.of());
        }
        content.append(text.substring(at));
        String c = content.toString().strip();
        return new Answer(c.isEmpty() ? null : c, List.copyOf(calls));
      }
      case LLAMA3_JSON -> {
        String body = llamaBody(text);
        // Objects one after another, a ';' between them (not inside them: arguments keep theirs).
        for (String rest = body; !rest.isEmpty(); ) {
          try (JsonParser p = JSON.createParser(rest)) {
            ToolCall c = p.nextToken() == JsonToken.START_OBJECT ? call(p, rest) : null;
            if (c == null) {
              return new Answer(text, List.of());
            }
            calls.add(c);
            rest = rest.substring((int) p.getCurrentLocation().getCharOffset()).strip();
          } catch (IOException e) {
            return new Answer(text, List.of());
          }
          if (rest.startsWith(";")) {
            rest = rest.substring(1).strip();
          }
        }
        return calls.isEmpty() ? new Answer(text, List.of()) : new Answer(null, List.copyOf(calls));
      }
      default -> {
        return new Answer(text, List.of());
      }
    }
  }

  /**
   * While {@code text} streams: the calls it has begun, in order, each once its name is whole and
   * its arguments have begun, with its arguments as far as the model wrote them (arguments written
   * as a JSON string stay "" until the whole answer decodes them). Every start of an answer gives a
   * start of the calls that {@link #parse} reads from the whole of it, so that streamed pieces add
   * up to them.
   */
  public List<ToolCall> callsSoFar(String text) {
    List<ToolCall> calls = new ArrayList<>();
    switch (this) {
      case HERMES -> {
        for (int open = text.indexOf(OPEN); open >= 0; ) {
          int close = text.indexOf(CLOSE, open);
          int bodyEnd = close < 0 ? text.length() : close;
          List<CallScanner.Call> in =
              CallScanner.of(text.substring(open + OPEN.length(), bodyEnd), argumentsKey, 1);
          if (in.isEmpty() || !add(in.get(0), calls) || close < 0) {
            break; // a block is one call: the next can only follow a whole one
          }
          open = text.indexOf(OPEN, close + CLOSE.length());
        }
      }
      case LLAMA3_JSON -> {
        String body = llamaBody(text);
        if (body.startsWith("{")) {
          for (CallScanner.Call c : CallScanner.of(body, argumentsKey, 1)) {
            if (!add(c, calls)) {
              break;
            }
          }
        }
      }
      default -> {}
    }
    return calls;
  }

  /** Adds {@code c} to {@code calls} if its arguments have begun; whether it did. */
  private static boolean add(CallScanner.Call c, List<ToolCall> calls) {
    if (!c.begun()) {
      return false;
    }
    String arguments = c.arguments().startsWith("\"") ? "" : c.arguments();
    calls.add(new ToolCall(null, c.name(), arguments));
    return true;
  }

  /** A Llama 3.1 answer without the blanks before it and its {@code <|python_tag|>}. */
  private static String llamaBody(String text) {
    String body = text.strip();
    return body.startsWith(PYTHON_TAG) ? body.substring(PYTHON_TAG.length()).stripLeading() : body;
  }

  /**
   * While {@code text} streams: the index from which it may be, or may become, a call; the text
   * before it is content whatever follows. The answer only grows, and the index never moves back
   * over text already judged content.
   */
  public int holdFrom(String text) {
    switch (this) {
      case HERMES -> {
        int at = text.indexOf(OPEN);
        if (at >= 0) {
          return at;
        }
        // The longest end of the text that may begin the opening tag.
        for (int k = Math.min(OPEN.length() - 1, text.length()); k > 0; k--) {
          if (OPEN.startsWith(text.substring(text.length() - k))) {
            return text.length() - k;
          }
        }
        return text.length();
      }
      case LLAMA3_JSON -> {
        String s = text.stripLeading();
        boolean mayBeCall =
            s.isEmpty()
                || s.startsWith("{")
                || s.startsWith(PYTHON_TAG)
                || PYTHON_TAG.startsWith(s);
        return mayBeCall ? 0 : text.length();
      }
      default -> {
        return text.length();
      }
    }
  }

  private ToolCall call(String json) {
    try (JsonParser p = JSON.createParser(json)) {
      return p.nextToken() == JsonToken.START_OBJECT ? call(p, json) : null;
    } catch (IOException e) {
      return null;
    }
  }

  /**
   * The call whose object {@code p} has just opened, in {@code source}, or null if it is not one
   * (no name string, or no object or string arguments); {@code p} is left after the object. The
   * first {@code name}, and the first member named as the family names arguments or {@code
   * arguments}, count, as {@link CallScanner} reads them.
   */
  private ToolCall call(JsonParser p, String source) throws IOException {
    String name = null;
    String arguments = null;
    boolean namedYet = false;
    boolean argumentsYet = false;
    JsonToken t;
    while ((t = p.nextToken()) == JsonToken.FIELD_NAME) {
      String member = p.getCurrentName();
      JsonToken v = p.nextToken();
      if (member.equals("name") && !namedYet) {
        namedYet = true;
        name = v == JsonToken.VALUE_STRING ? p.getText() : null;
      } else if (!argumentsYet && (member.equals(argumentsKey) || member.equals("arguments"))) {
        argumentsYet = true;
        if (v == JsonToken.START_OBJECT) {
          int from = (int) p.getTokenLocation().getCharOffset();
          p.skipChildren();
          arguments = source.substring(from, (int) p.getCurrentLocation().getCharOffset());
        } else if (v == JsonToken.VALUE_STRING) {
          arguments = p.getText();
        }
      }
      p.skipChildren();
    }
    return t == JsonToken.END_OBJECT && name != null && arguments != null
        ? new ToolCall(null, name, arguments)
        : null;
  }
}
