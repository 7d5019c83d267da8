package io.flinfer.job.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * The Responses API's answer: a {@code response} object whose {@code output} holds a reasoning item
 * (a thinking model's thought), a message item (the text) and function call items, in the order the
 * model wrote them; its status {@code completed}, or {@code incomplete} at the token limit; its
 * usage in the API's names. The request's parameters are repeated, as OpenAI does.
 */
final class ResponsesAnswer {
  private static final JsonNodeFactory F = JsonNodeFactory.instance;

  private ResponsesAnswer() {}

  /** A whole chat answer (one choice) as a response. */
  static ObjectNode fromChat(ObjectNode chat, String id, long created, JsonNode request) {
    JsonNode message = chat.at("/choices/0/message");
    ArrayNode output = F.arrayNode();
    JsonNode thought = message.get("reasoning_content");
    if (thought != null && thought.isTextual()) {
      output.add(reasoningItem(id, thought.asText(), "completed"));
    }
    JsonNode content = message.get("content");
    if (content != null && content.isTextual() && !content.asText().isEmpty()) {
      output.add(messageItem(id, content.asText(), "completed"));
    }
    JsonNode calls = message.path("tool_calls");
    for (int k = 0; k < calls.size(); k++) {
      JsonNode c = calls.get(k);
      output.add(
          functionCallItem(
              id,
              k,
              c.path("id").asText(),
              c.at("/function/name").asText(),
              c.at("/function/arguments").asText(),
              "completed"));
    }
    String finish = chat.at("/choices/0/finish_reason").asText();
    return response(
        id,
        created,
        chat.path("model").asText(),
        request,
        output,
        finish,
        usage(chat.get("usage")));
  }

  /**
   * The response object: {@code finish} the chat's finish reason ({@code length}: incomplete; null:
   * still in progress), {@code usage} in the chat's names (null: none yet).
   */
  static ObjectNode response(
      String id,
      long created,
      String model,
      JsonNode request,
      ArrayNode output,
      String finish,
      ObjectNode usage) {
    ObjectNode r = F.objectNode();
    r.put("id", "resp_" + id);
    r.put("object", "response");
    r.put("created_at", created);
    String status =
        finish == null ? "in_progress" : finish.equals("length") ? "incomplete" : "completed";
    r.put("status", status);
    r.putNull("error");
    if (status.equals("incomplete")) {
      r.putObject("incomplete_details").put("reason", "max_output_tokens");
    } else {
      r.putNull("incomplete_details");
    }
    r.set("instructions", orNull(request.get("instructions")));
    r.set("max_output_tokens", orNull(request.get("max_output_tokens")));
    r.put("model", model);
    r.set("output", output);
    r.put("parallel_tool_calls", request.path("parallel_tool_calls").asBoolean(true));
    r.putNull("previous_response_id");
    r.putNull("reasoning");
    r.put("store", false);
    r.put("temperature", request.path("temperature").asDouble(1.0));
    if (request.hasNonNull("text")) {
      r.set("text", request.get("text"));
    } else {
      r.putObject("text").putObject("format").put("type", "text");
    }
    r.set(
        "tool_choice",
        request.hasNonNull("tool_choice") ? request.get("tool_choice") : F.textNode("auto"));
    r.set("tools", request.hasNonNull("tools") ? request.get("tools") : F.arrayNode());
    r.put("top_p", request.path("top_p").asDouble(1.0));
    r.put("truncation", "disabled");
    r.set("usage", usage == null ? F.nullNode() : usage);
    r.set("user", orNull(request.get("user")));
    r.set("metadata", request.hasNonNull("metadata") ? request.get("metadata") : F.objectNode());
    return r;
  }

  private static JsonNode orNull(JsonNode v) {
    return v == null ? F.nullNode() : v;
  }

  /** The chat's usage in the Responses API's names; null for none. */
  static ObjectNode usage(JsonNode chat) {
    if (chat == null || chat.isNull()) {
      return null;
    }
    int in = chat.path("prompt_tokens").asInt();
    int out = chat.path("completion_tokens").asInt();
    ObjectNode u = F.objectNode();
    u.put("input_tokens", in);
    u.putObject("input_tokens_details")
        .put("cached_tokens", chat.at("/prompt_tokens_details/cached_tokens").asInt());
    u.put("output_tokens", out);
    u.putObject("output_tokens_details")
        .put("reasoning_tokens", chat.at("/completion_tokens_details/reasoning_tokens").asInt());
    u.put("total_tokens", in + out);
    return u;
  }

  static ObjectNode reasoningItem(String id, String text, String status) {
    ObjectNode item = F.objectNode().put("type", "reasoning").put("id", "rs_" + id);
    item.putArray("summary");
    ArrayNode content = item.putArray("content");
    if (text != null) {
      content.add(reasoningPart(text));
    }
    item.put("status", status);
    return item;
  }

  static ObjectNode reasoningPart(String text) {
    return F.objectNode().put("type", "reasoning_text").put("text", text);
  }

  static ObjectNode messageItem(String id, String text, String status) {
    ObjectNode item = F.objectNode().put("type", "message").put("id", "msg_" + id);
    item.put("status", status).put("role", "assistant");
    ArrayNode content = item.putArray("content");
    if (text != null) {
      content.add(textPart(text));
    }
    return item;
  }

  static ObjectNode textPart(String text) {
    ObjectNode part = F.objectNode().put("type", "output_text").put("text", text);
    part.putArray("annotations");
    part.putArray("logprobs");
    return part;
  }

  static ObjectNode functionCallItem(
      String id, int index, String callId, String name, String arguments, String status) {
    return F.objectNode()
        .put("type", "function_call")
        .put("id", "fc_" + id + "_" + index)
        .put("call_id", callId)
        .put("name", name)
        .put("arguments", arguments)
        .put("status", status);
  }
}
