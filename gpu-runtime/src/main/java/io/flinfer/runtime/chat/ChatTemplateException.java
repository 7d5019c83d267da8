package io.flinfer.runtime.chat;

/** A chat template that could not render a conversation, with the template's own message. */
public final class ChatTemplateException extends IllegalArgumentException {
  public ChatTemplateException(String message, Throwable cause) {
    super("chat template: " + message, cause);
  }
}
