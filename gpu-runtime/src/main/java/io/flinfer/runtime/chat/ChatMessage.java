package io.flinfer.runtime.chat;

import java.util.Map;

/**
 * One turn of a conversation: who speaks ({@code system}, {@code user}, {@code assistant}, ...).
 */
public record ChatMessage(String role, String content) {
  public ChatMessage {
    if (role == null || content == null) {
      throw new IllegalArgumentException("a message needs a role and content");
    }
  }

  /** As a template sees it: {@code message['role']}, {@code message.content}. */
  Map<String, Object> asMap() {
    return Map.of("role", role, "content", content);
  }
}
