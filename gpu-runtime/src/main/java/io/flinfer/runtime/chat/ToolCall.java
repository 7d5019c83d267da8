package io.flinfer.runtime.chat;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;

/**
 * A function call an assistant's turn made: its id, the function's name and its arguments as JSON
 * text (OpenAI's form).
 */
public record ToolCall(String id, String name, String arguments) {
  private static final ObjectMapper JSON = new ObjectMapper();

  public ToolCall {
    if (name == null || arguments == null) {
      throw new IllegalArgumentException("a tool call needs a name and arguments");
    }
  }

  /**
   * {@code {"id", "type": "function", "function": {"name", "arguments"}}}, the arguments a mapping
   * when they are a JSON object (templates write them with {@code tojson}, as vLLM hands them over)
   * and the text otherwise.
   */
  Map<String, Object> asMap() {
    Map<String, Object> function = new LinkedHashMap<>();
    function.put("name", name);
    function.put("arguments", argumentsValue());
    Map<String, Object> m = new LinkedHashMap<>();
    if (id != null) {
      m.put("id", id);
    }
    m.put("type", "function");
    m.put("function", function);
    return m;
  }

  /**
   * The id of a request's call at {@code index}: {@code call_} and 24 hex digits derived from the
   * request id, so that a retry or a replay names its calls alike.
   */
  public static String idFor(String requestId, int index) {
    UUID u = UUID.nameUUIDFromBytes((requestId + "/" + index).getBytes(StandardCharsets.UTF_8));
    return "call_" + u.toString().replace("-", "").substring(0, 24);
  }

  /** This call with {@code id}. */
  public ToolCall withId(String id) {
    return new ToolCall(id, name, arguments);
  }

  private Object argumentsValue() {
    try {
      JsonNode n = JSON.readTree(arguments);
      if (n != null && n.isObject()) {
        return JSON.convertValue(n, LinkedHashMap.class);
      }
    } catch (JsonProcessingException e) {
      // Not JSON: the template gets the text as it is.
    }
    return arguments;
  }
}
