package io.flinfer.runtime.chat;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One turn of a conversation: who speaks ({@code system}, {@code user}, {@code assistant}, {@code
 * tool}, ...), what was said, the tool calls an assistant's turn made, which call a tool's turn
 * answers, and what a reasoning model thought before an assistant's turn.
 *
 * @param toolCalls the assistant's calls, in order (empty for none)
 * @param toolCallId the call a {@code tool} turn answers, or null
 * @param reasoningContent an assistant turn's reasoning apart from its content, or null
 */
public record ChatMessage(
    String role,
    String content,
    List<ToolCall> toolCalls,
    String toolCallId,
    String reasoningContent) {
  public ChatMessage {
    if (role == null || content == null) {
      throw new IllegalArgumentException("a message needs a role and content");
    }
    toolCalls = List.copyOf(toolCalls);
  }

  public ChatMessage(String role, String content) {
    this(role, content, List.of(), null, null);
  }

  public ChatMessage(String role, String content, List<ToolCall> toolCalls, String toolCallId) {
    this(role, content, toolCalls, toolCallId, null);
  }

  /**
   * As a template sees it ({@code message['role']}, {@code message.content}, and {@code
   * tool_calls}/{@code tool_call_id}/{@code reasoning_content} only where the turn has them, as a
   * client's message would), each call in OpenAI's form with its arguments as a mapping where they
   * are a JSON object.
   */
  Map<String, Object> asMap() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("role", role);
    m.put("content", content);
    if (!toolCalls.isEmpty()) {
      List<Object> calls = new ArrayList<>();
      for (ToolCall c : toolCalls) {
        calls.add(c.asMap());
      }
      m.put("tool_calls", calls);
    }
    if (toolCallId != null) {
      m.put("tool_call_id", toolCallId);
    }
    if (reasoningContent != null) {
      m.put("reasoning_content", reasoningContent);
    }
    return m;
  }
}
