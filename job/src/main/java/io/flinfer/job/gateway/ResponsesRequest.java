package io.flinfer.job.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;

/**
 * A request to OpenAI's Responses API ({@code POST /v1/responses}) as the chat completion it
 * amounts to: {@code input} (a string, or message, {@code function_call} and {@code
 * function_call_output} items) and {@code instructions} become the conversation, {@code
 * max_output_tokens}, {@code temperature}, {@code top_p}, {@code text.format}, function {@code
 * tools}, {@code tool_choice}, {@code parallel_tool_calls}, {@code user} and {@code stream} their
 * chat forms, and the chat extensions the gateway takes ({@code seed}, {@code top_k}, {@code
 * chat_template_kwargs}, ...) pass as they are. Nothing is stored, so {@code previous_response_id}
 * and {@code background} are refused, as is any parameter the engine cannot honour.
 */
final class ResponsesRequest {
  private static final JsonNodeFactory F = JsonNodeFactory.instance;

  /** Passed to the chat request unchanged: the same meaning in both APIs. */
  private static final Set<String> SAME =
      Set.of(
          "model",
          "temperature",
          "top_p",
          "parallel_tool_calls",
          "user",
          "stream",
          "seed",
          "stop",
          "top_k",
          "min_p",
          "repetition_penalty",
          "frequency_penalty",
          "presence_penalty",
          "logit_bias",
          "ignore_eos",
          "stop_token_ids",
          "min_tokens",
          "chat_template_kwargs",
          "thinking_token_budget");

  /** Taken and answered as OpenAI does, with no effect here. */
  private static final Set<String> IGNORED = Set.of("metadata", "store", "service_tier");

  /** The chat completion request it amounts to. */
  final ObjectNode chat;

  /** The request's parameters that a response repeats (instructions, tools, text, ...). */
  final JsonNode body;

  private ResponsesRequest(ObjectNode chat, JsonNode body) {
    this.chat = chat;
    this.body = body;
  }

  static ResponsesRequest parse(JsonNode body) throws ApiError {
    if (body == null || !body.isObject()) {
      throw ApiError.badParameter("body", "must be a JSON object");
    }
    ObjectNode chat = F.objectNode();
    ArrayNode messages = chat.putArray("messages");
    for (Iterator<Map.Entry<String, JsonNode>> it = body.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      String name = e.getKey();
      JsonNode v = e.getValue();
      if (SAME.contains(name)) {
        chat.set(name, v);
      } else if (v.isNull() || IGNORED.contains(name)) {
        continue;
      } else {
        switch (name) {
          case "input", "instructions" -> {} // below, in order
          case "max_output_tokens" -> chat.set("max_completion_tokens", v);
          case "text" -> format(v, chat);
          case "tools" -> chat.set("tools", tools(v));
          case "tool_choice" -> chat.set("tool_choice", toolChoice(v));
          case "truncation" -> {
            if (!"disabled".equals(v.asText())) {
              throw ApiError.badParameter(
                  "truncation", "only disabled: a prompt longer than the context is refused");
            }
          }
          case "include" -> {
            if (!v.isArray() || !v.isEmpty()) {
              throw ApiError.unsupported("include");
            }
          }
          default -> throw ApiError.unsupported(name);
        }
      }
    }
    JsonNode instructions = body.get("instructions");
    if (instructions != null && !instructions.isNull()) {
      if (!instructions.isTextual()) {
        throw ApiError.badParameter("instructions", "must be a string");
      }
      messages.addObject().put("role", "system").put("content", instructions.asText());
    }
    input(body.get("input"), messages);
    if (chat.path("stream").asBoolean(false)) {
      chat.putObject("stream_options").put("include_usage", true);
    }
    return new ResponsesRequest(chat, body);
  }

  /**
   * An error about the chat request, in the Responses API's names ({@code max_output_tokens},
   * {@code text.format}, a tool's {@code parameters}), so that it names what the client sent.
   */
  static ApiError inResponsesTerms(ApiError e) {
    if (e.param == null) {
      return e;
    }
    String p =
        e.param
            .replace("max_completion_tokens", "max_output_tokens")
            .replace("response_format", "text.format")
            .replace(".function.", ".");
    return p.equals(e.param)
        ? e
        : new ApiError(
            e.status,
            e.type,
            p,
            e.code,
            e.getMessage().replace("'" + e.param + "'", "'" + p + "'"));
  }

  /** The input as chat messages: text is a user turn; items in order. */
  private static void input(JsonNode input, ArrayNode messages) throws ApiError {
    if (input == null || input.isNull()) {
      throw new ApiError(
          400,
          "invalid_request_error",
          "input",
          "missing_required_parameter",
          "Missing required parameter: 'input'.");
    }
    if (input.isTextual()) {
      messages.addObject().put("role", "user").put("content", input.asText());
      return;
    }
    if (!input.isArray() || input.isEmpty()) {
      throw ApiError.badParameter("input", "must be a string or a non-empty array of items");
    }
    ObjectNode calling = null; // the assistant turn that the function calls so far belong to
    for (int i = 0; i < input.size(); i++) {
      JsonNode item = input.get(i);
      String param = "input[" + i + "]";
      String type = item.path("type").asText(item.has("role") ? "message" : "");
      switch (type) {
        case "message" -> {
          calling = null;
          String role = text(item, "role", param);
          if (role.equals("developer")) {
            role = "system";
          }
          messages
              .addObject()
              .put("role", role)
              .put("content", content(item.get("content"), param));
        }
        case "function_call" -> {
          if (calling == null) {
            calling = messages.addObject().put("role", "assistant").put("content", "");
            calling.putArray("tool_calls");
          }
          ObjectNode call = ((ArrayNode) calling.get("tool_calls")).addObject();
          call.put("id", text(item, "call_id", param)).put("type", "function");
          call.putObject("function")
              .put("name", text(item, "name", param))
              .put("arguments", text(item, "arguments", param));
        }
        case "function_call_output" -> {
          calling = null;
          messages
              .addObject()
              .put("role", "tool")
              .put("tool_call_id", text(item, "call_id", param))
              .put("content", text(item, "output", param));
        }
        case "reasoning" -> {} // a reasoning model's earlier thinking, which templates drop
        default -> throw ApiError.badParameter(param + ".type", "unsupported item type " + type);
      }
    }
  }

  /** A message's content: a string, or its text parts joined. */
  private static String content(JsonNode content, String param) throws ApiError {
    if (content != null && content.isTextual()) {
      return content.asText();
    }
    if (content == null || !content.isArray()) {
      throw ApiError.badParameter(param + ".content", "must be a string or an array of parts");
    }
    StringBuilder text = new StringBuilder();
    for (int k = 0; k < content.size(); k++) {
      JsonNode part = content.get(k);
      String type = part.path("type").asText();
      if (!type.equals("input_text") && !type.equals("output_text")) {
        throw ApiError.badParameter(
            param + ".content[" + k + "].type", "only text parts are served, not " + type);
      }
      text.append(part.path("text").asText());
    }
    return text.toString();
  }

  private static String text(JsonNode item, String field, String param) throws ApiError {
    JsonNode v = item.get(field);
    if (v == null || !v.isTextual()) {
      throw ApiError.badParameter(param + "." + field, "must be a string");
    }
    return v.asText();
  }

  /** {@code text.format} as the chat's {@code response_format}. */
  private static void format(JsonNode text, ObjectNode chat) throws ApiError {
    JsonNode format = text.get("format");
    if (format == null || format.isNull()) {
      return;
    }
    String type = format.path("type").asText();
    ObjectNode rf = chat.putObject("response_format").put("type", type);
    if (type.equals("json_schema")) {
      ObjectNode schema = rf.putObject("json_schema");
      schema.set("name", format.get("name"));
      schema.set("schema", format.get("schema"));
      if (format.has("strict")) {
        schema.set("strict", format.get("strict"));
      }
    } else if (!type.equals("text") && !type.equals("json_object")) {
      throw ApiError.badParameter(
          "text.format.type", "must be text, json_object or json_schema, not " + type);
    }
  }

  /** Function tools, from the Responses API's flat form to the chat's nested one. */
  private static ArrayNode tools(JsonNode tools) throws ApiError {
    if (!tools.isArray()) {
      throw ApiError.badParameter("tools", "must be an array");
    }
    ArrayNode out = F.arrayNode();
    for (int i = 0; i < tools.size(); i++) {
      JsonNode t = tools.get(i);
      if (!"function".equals(t.path("type").asText())) {
        throw ApiError.badParameter(
            "tools[" + i + "].type", "only function tools are served, not " + t.path("type"));
      }
      ObjectNode f = out.addObject().put("type", "function").putObject("function");
      for (String field : new String[] {"name", "description", "parameters", "strict"}) {
        if (t.has(field)) {
          f.set(field, t.get(field));
        }
      }
    }
    return out;
  }

  /** {@code {"type": "function", "name": ...}} as the chat's nested form; strings as they are. */
  private static JsonNode toolChoice(JsonNode choice) {
    if (choice.isObject() && "function".equals(choice.path("type").asText())) {
      ObjectNode c = F.objectNode().put("type", "function");
      c.putObject("function").set("name", choice.get("name"));
      return c;
    }
    return choice;
  }
}
