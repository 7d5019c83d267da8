package io.flinfer.job.gateway;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.flinfer.avro.Completion;

/** The bodies OpenAI's API answers with, for completions and chat completions. */
final class OpenAiResponses {
  private static final JsonNodeFactory JSON = JsonNodeFactory.instance;

  private OpenAiResponses() {}

  /** OpenAI's finish reasons: stop (a stop string, a stop token or the end of text) or length. */
  static String finishReason(Completion c) {
    return switch (c.getFinishReason()) {
      case "length" -> "length";
      case "stop" -> "stop";
      default -> c.getFinishReason();
    };
  }

  static ObjectNode usage(Completion c) {
    int prompt = c.getUsage().getPromptTokens();
    int completion = c.getUsage().getCompletionTokens();
    ObjectNode u = JSON.objectNode();
    u.put("prompt_tokens", prompt);
    u.put("completion_tokens", completion);
    u.put("total_tokens", prompt + completion);
    u.putObject("prompt_tokens_details").put("cached_tokens", c.getUsage().getCachedTokens());
    return u;
  }

  private static ObjectNode envelope(String id, String object, String model, long created) {
    ObjectNode o = JSON.objectNode();
    o.put("id", id);
    o.put("object", object);
    o.put("created", created);
    o.put("model", model);
    return o;
  }

  /** The whole answer, non-streaming. */
  static ObjectNode answer(boolean chat, String id, String model, long created, Completion c) {
    ObjectNode o = envelope(id, chat ? "chat.completion" : "text_completion", model, created);
    ObjectNode choice = o.putArray("choices").addObject();
    choice.put("index", 0);
    if (chat) {
      ObjectNode m = choice.putObject("message");
      m.put("role", "assistant");
      m.put("content", c.getText());
      m.putNull("refusal");
    } else {
      choice.put("text", c.getText());
    }
    choice.putNull("logprobs");
    choice.put("finish_reason", finishReason(c));
    o.set("usage", usage(c));
    return o;
  }

  /**
   * One streamed event: a text delta (chat's first also carries the role), or the last one with the
   * finish reason ({@code finish} not null).
   */
  static ObjectNode delta(
      boolean chat,
      String id,
      String model,
      long created,
      String text,
      boolean first,
      String finish) {
    ObjectNode o = envelope(id, chat ? "chat.completion.chunk" : "text_completion", model, created);
    ObjectNode choice = o.putArray("choices").addObject();
    choice.put("index", 0);
    if (chat) {
      ObjectNode d = choice.putObject("delta");
      if (first) {
        d.put("role", "assistant");
      }
      if (text != null) {
        d.put("content", text);
      }
    } else {
      choice.put("text", text == null ? "" : text);
    }
    choice.putNull("logprobs");
    if (finish == null) {
      choice.putNull("finish_reason");
    } else {
      choice.put("finish_reason", finish);
    }
    if (chat) {
      o.putNull("usage");
    }
    return o;
  }

  /** The last streamed event with {@code stream_options.include_usage}: no choices, the usage. */
  static ObjectNode usageEvent(boolean chat, String id, String model, long created, Completion c) {
    ObjectNode o = envelope(id, chat ? "chat.completion.chunk" : "text_completion", model, created);
    o.putArray("choices");
    o.set("usage", usage(c));
    return o;
  }
}
