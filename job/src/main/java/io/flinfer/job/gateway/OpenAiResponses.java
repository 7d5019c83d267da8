package io.flinfer.job.gateway;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.flinfer.avro.Completion;
import java.util.List;

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

  /**
   * The usage of a request's choices: the prompt counted once, as OpenAI counts it (its cached
   * tokens those of the first choice), the completion tokens of every choice.
   */
  static ObjectNode usage(List<Completion> choices) {
    Completion first = choices.get(0);
    int prompt = first.getUsage().getPromptTokens();
    int completion = choices.stream().mapToInt(c -> c.getUsage().getCompletionTokens()).sum();
    ObjectNode u = JSON.objectNode();
    u.put("prompt_tokens", prompt);
    u.put("completion_tokens", completion);
    u.put("total_tokens", prompt + completion);
    u.putObject("prompt_tokens_details").put("cached_tokens", first.getUsage().getCachedTokens());
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

  /** The whole answer, non-streaming: one choice per completion, in order. */
  static ObjectNode answer(
      boolean chat, String id, String model, long created, List<Completion> choices) {
    ObjectNode o = envelope(id, chat ? "chat.completion" : "text_completion", model, created);
    var array = o.putArray("choices");
    for (int i = 0; i < choices.size(); i++) {
      Completion c = choices.get(i);
      ObjectNode choice = array.addObject();
      choice.put("index", i);
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
    }
    o.set("usage", usage(choices));
    return o;
  }

  /**
   * One streamed event of choice {@code index}: a text delta (chat's first also carries the role),
   * or the last one with the finish reason ({@code finish} not null).
   */
  static ObjectNode delta(
      boolean chat,
      String id,
      String model,
      long created,
      int index,
      String text,
      boolean first,
      String finish) {
    ObjectNode o = envelope(id, chat ? "chat.completion.chunk" : "text_completion", model, created);
    ObjectNode choice = o.putArray("choices").addObject();
    choice.put("index", index);
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
  static ObjectNode usageEvent(
      boolean chat, String id, String model, long created, List<Completion> choices) {
    ObjectNode o = envelope(id, chat ? "chat.completion.chunk" : "text_completion", model, created);
    o.putArray("choices");
    o.set("usage", usage(choices));
    return o;
  }
}
