package io.flinfer.job.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.flinfer.avro.Completion;
import io.flinfer.runtime.chat.CallScanner;
import io.flinfer.runtime.chat.ToolCall;
import io.flinfer.runtime.chat.ToolCallFormat;
import io.flinfer.runtime.grammar.JsonSchemaGrammar;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * A chat request's {@code tools}, {@code tool_choice} and {@code parallel_tool_calls}, checked, and
 * how its answers become tool calls. {@code auto} lets the model choose and reads calls back from
 * its family's own form ({@link ToolCallFormat}); {@code required} and a named function constrain
 * the answer with a JSON Schema (the calls as an array of {@code {"name", ARGUMENTS}} objects told
 * apart by name, or the named function's arguments), so that the answer is always a call whose
 * arguments are an instance of the function's parameters. {@code none} hands the model no tools.
 */
final class Tools {
  /** What the client asked the model to do with the tools. */
  enum Choice {
    NONE,
    AUTO,
    REQUIRED,
    NAMED
  }

  private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_-]{1,64}");
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final JsonNodeFactory F = JsonNodeFactory.instance;

  final Choice choice;

  /** The tools as the template gets them (OpenAI's form), or null with {@link Choice#NONE}. */
  final String toolsJson;

  /** The schema the answer must follow, or null with {@code auto}. */
  final String schema;

  private final String named;
  private final ToolCallFormat format;
  private final boolean parallel;

  private Tools(
      Choice choice,
      String toolsJson,
      String schema,
      String named,
      ToolCallFormat f,
      boolean parallel) {
    this.choice = choice;
    this.toolsJson = toolsJson;
    this.schema = schema;
    this.named = named;
    this.format = f;
    this.parallel = parallel;
  }

  /**
   * Checks the request's tool parameters; null when it has none.
   *
   * @param format how the served model writes calls
   */
  static Tools parse(JsonNode body, ToolCallFormat format) throws ApiError {
    JsonNode tools = body.get("tools");
    JsonNode choice = body.get("tool_choice");
    boolean parallel = body.path("parallel_tool_calls").asBoolean(true);
    if (tools == null || tools.isNull()) {
      if (choice != null && !choice.isNull() && !"none".equals(choice.asText())) {
        throw ApiError.badParameter("tool_choice", "needs tools");
      }
      return null;
    }
    if (!tools.isArray() || tools.isEmpty()) {
      throw ApiError.badParameter("tools", "must be a non-empty array of functions");
    }
    Map<String, JsonNode> parameters = new LinkedHashMap<>();
    for (int i = 0; i < tools.size(); i++) {
      JsonNode t = tools.get(i);
      String at = "tools[" + i + "]";
      if (!"function".equals(t.path("type").asText())) {
        throw ApiError.badParameter(at + ".type", "only function tools are supported");
      }
      String name = t.path("function").path("name").asText("");
      if (!NAME.matcher(name).matches()) {
        throw ApiError.badParameter(
            at + ".function.name", "must be 1 to 64 letters, digits, underscores or dashes");
      }
      if (parameters.containsKey(name)) {
        throw ApiError.badParameter(at + ".function.name", "repeats the name " + name);
      }
      JsonNode p = t.path("function").get("parameters");
      if (p != null && !p.isNull() && !p.isObject()) {
        throw ApiError.badParameter(at + ".function.parameters", "must be a JSON Schema object");
      }
      parameters.put(name, p == null || p.isNull() ? emptyObject() : p);
    }
    Choice c;
    String named = null;
    if (choice == null || choice.isNull() || "auto".equals(choice.asText())) {
      c = Choice.AUTO;
    } else if ("none".equals(choice.asText())) {
      return new Tools(Choice.NONE, null, null, null, format, parallel);
    } else if ("required".equals(choice.asText())) {
      c = Choice.REQUIRED;
    } else if (choice.isObject() && "function".equals(choice.path("type").asText())) {
      c = Choice.NAMED;
      named = choice.path("function").path("name").asText("");
      if (!parameters.containsKey(named)) {
        throw ApiError.badParameter("tool_choice", "names no function in tools: " + named);
      }
    } else {
      throw ApiError.badParameter(
          "tool_choice", "must be none, auto, required or {\"type\": \"function\", ...}");
    }
    if (c != Choice.AUTO && body.hasNonNull("response_format")) {
      throw ApiError.badParameter(
          "response_format", "cannot be given with a tool_choice that forces a call");
    }
    if (c != Choice.AUTO) {
      // Each forced function's parameters must compile: the refusal names the tool.
      int i = 0;
      for (Map.Entry<String, JsonNode> e : parameters.entrySet()) {
        if (c == Choice.REQUIRED || e.getKey().equals(named)) {
          try {
            JsonSchemaGrammar.compile(e.getValue().toString());
          } catch (IllegalArgumentException x) {
            throw ApiError.badParameter("tools[" + i + "].function.parameters", x.getMessage());
          }
        }
        i++;
      }
    }
    String schema =
        switch (c) {
          case NAMED -> parameters.get(named).toString();
          case REQUIRED -> calls(parameters, format.argumentsKey(), parallel).toString();
          default -> null;
        };
    if (schema != null) {
      try {
        JsonSchemaGrammar.compile(schema);
      } catch (IllegalArgumentException e) {
        throw ApiError.badParameter("tools", e.getMessage());
      }
    }
    return new Tools(c, tools.toString(), schema, named, format, parallel);
  }

  private static ObjectNode emptyObject() {
    ObjectNode o = F.objectNode();
    o.put("type", "object");
    o.putObject("properties");
    return o;
  }

  /** An array of calls, each an object with a function's name and its own arguments. */
  private static ObjectNode calls(Map<String, JsonNode> parameters, String key, boolean parallel) {
    ArrayNode alternatives = F.arrayNode();
    for (Map.Entry<String, JsonNode> e : parameters.entrySet()) {
      ObjectNode call = alternatives.addObject();
      call.put("type", "object");
      ObjectNode props = call.putObject("properties");
      props.putObject("name").put("const", e.getKey());
      props.set(key, e.getValue());
      call.putArray("required").add("name").add(key);
    }
    ObjectNode s = F.objectNode();
    s.put("type", "array");
    s.put("minItems", 1);
    if (!parallel) {
      s.put("maxItems", 1);
    }
    s.putObject("items").set("anyOf", alternatives);
    return s;
  }

  /** One choice's answer: its content (or null), its calls, and OpenAI's finish reason. */
  record Answer(String content, List<ToolCall> calls, String finishReason) {}

  /** The answer {@code c} gives: calls with ids derived from its request id, so retries agree. */
  Answer answer(Completion c) {
    String text = c.getText();
    String finish = OpenAiResponses.finishReason(c);
    ToolCallFormat.Answer parsed =
        choice == Choice.AUTO ? format.parse(text, finish.equals("length")) : null;
    List<ToolCall> calls =
        switch (choice) {
          case NAMED -> List.of(new ToolCall(null, named, text));
          case REQUIRED -> callsSoFar(text); // cut short: the calls so far, as streamed
          case AUTO -> parsed.calls();
          default -> List.of();
        };
    if (calls.isEmpty()) {
      // With auto, the content as a stream gives it: without the blanks at its ends.
      return new Answer(choice == Choice.AUTO ? text.strip() : text, List.of(), finish);
    }
    if (!parallel && calls.size() > 1) {
      calls = calls.subList(0, 1); // the client takes one call at a time
    }
    List<ToolCall> withIds = new ArrayList<>();
    for (int i = 0; i < calls.size(); i++) {
      withIds.add(calls.get(i).withId(ToolCall.idFor(c.getRequestId(), i)));
    }
    String content = parsed == null ? null : parsed.content();
    // A forced call ends as OpenAI ends it: stop for a named function, tool_calls otherwise.
    String reason =
        finish.equals("length") ? "length" : choice == Choice.NAMED ? "stop" : "tool_calls";
    return new Answer(content, List.copyOf(withIds), reason);
  }

  /** While streaming: from where the answer so far may be a call (not sent as content). */
  int holdFrom(String text) {
    return choice == Choice.AUTO ? format.holdFrom(text) : 0;
  }

  /**
   * Whether the answer is only calls (a forced call): else content streams as far as it cannot be
   * the start of a call ({@link #holdFrom}), and the calls after it.
   */
  boolean forced() {
    return choice == Choice.NAMED || choice == Choice.REQUIRED;
  }

  /**
   * The calls in a start of the answer (without ids), each as soon as it is known, with its
   * arguments' text so far: a named function's arguments are the answer itself; {@code required}'s
   * calls are those whose name the answer has; {@code auto}'s those it has begun in its family's
   * form ({@link ToolCallFormat#callsSoFar}). A whole answer's are its calls.
   */
  List<ToolCall> callsSoFar(String text) {
    if (choice == Choice.NAMED) {
      return text.isEmpty() ? List.of() : List.of(new ToolCall(null, named, text));
    }
    List<ToolCall> calls = new ArrayList<>();
    if (choice == Choice.AUTO) {
      calls.addAll(format.callsSoFar(text));
    } else {
      for (CallScanner.Call c : CallScanner.of(text, format.argumentsKey(), 2)) {
        calls.add(c.toolCall());
      }
    }
    return parallel || calls.size() <= 1 ? calls : calls.subList(0, 1);
  }
}
