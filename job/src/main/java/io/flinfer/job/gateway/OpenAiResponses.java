package io.flinfer.job.gateway;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.flinfer.avro.Completion;
import io.flinfer.runtime.chat.ReasoningParser;
import io.flinfer.runtime.chat.ReasoningParser.Split;
import io.flinfer.runtime.chat.ToolCall;
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
   * The usage of a request's choices, {@code perPrompt} of each prompt in a row: each prompt
   * counted once, as OpenAI counts it (its cached tokens those of its first choice), the completion
   * tokens of every choice, and, where the thinking is answered apart ({@code reasoning}), the
   * thinking's share of them.
   */
  static ObjectNode usage(List<Completion> choices, int perPrompt, boolean reasoning) {
    int prompt = 0;
    int cached = 0;
    for (int i = 0; i < choices.size(); i += perPrompt) {
      prompt += choices.get(i).getUsage().getPromptTokens();
      cached += choices.get(i).getUsage().getCachedTokens();
    }
    int completion = choices.stream().mapToInt(c -> c.getUsage().getCompletionTokens()).sum();
    ObjectNode u = JSON.objectNode();
    u.put("prompt_tokens", prompt);
    u.put("completion_tokens", completion);
    u.put("total_tokens", prompt + completion);
    u.putObject("prompt_tokens_details").put("cached_tokens", cached);
    if (reasoning) {
      u.putObject("completion_tokens_details")
          .put(
              "reasoning_tokens",
              choices.stream().mapToInt(c -> c.getUsage().getReasoningTokens()).sum());
    }
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

  /**
   * The whole answer to {@code request}, non-streaming: one choice per completion, in order; with
   * its {@code echo}, each completion's text after its prompt; with {@code reasoning} (not null),
   * each chat message's thinking as its {@code reasoning_content}, apart from its content.
   */
  static ObjectNode answer(
      boolean chat,
      String id,
      String model,
      long created,
      List<Completion> choices,
      OpenAiRequest request,
      ReasoningParser reasoning) {
    Tools tools = request.tools;
    ObjectNode o = envelope(id, chat ? "chat.completion" : "text_completion", model, created);
    var array = o.putArray("choices");
    for (int i = 0; i < choices.size(); i++) {
      Completion c = choices.get(i);
      ObjectNode choice = array.addObject();
      choice.put("index", i);
      String finish = finishReason(c);
      if (chat) {
        Split thought = split(reasoning, c);
        Completion answered = answerOnly(c, thought);
        Tools.Answer a =
            tools == null
                ? new Tools.Answer(answered.getText(), List.of(), finish)
                : tools.answer(answered);
        ObjectNode m = choice.putObject("message");
        m.put("role", "assistant");
        boolean noContent = thought.reasoning() != null && "".equals(a.content());
        m.put("content", noContent ? null : a.content());
        m.putNull("refusal");
        if (reasoning != null) {
          m.put("reasoning_content", thought.reasoning());
        }
        if (!a.calls().isEmpty()) {
          m.set("tool_calls", toolCalls(a.calls()));
        }
        finish = a.finishReason();
      } else {
        String echo = request.echo(i);
        choice.put("text", echo == null ? c.getText() : echo + c.getText());
      }
      choice.putNull("logprobs");
      choice.put("finish_reason", finish);
    }
    o.set("usage", usage(choices, request.perPrompt, reasoning != null));
    return o;
  }

  /** The thinking and answer of {@code c}; all answer without a parser. */
  static Split split(ReasoningParser reasoning, Completion c) {
    return reasoning == null ? new Split(null, c.getText()) : reasoning.split(c.getText());
  }

  /** {@code c} with its answer for text, its thinking left out, for the answer's tool calls. */
  static Completion answerOnly(Completion c, Split thought) {
    return thought.reasoning() == null
        ? c
        : Completion.newBuilder(c).setText(thought.content()).build();
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

  /** Calls in OpenAI's form. */
  static ArrayNode toolCalls(List<ToolCall> calls) {
    ArrayNode a = JSON.arrayNode();
    for (ToolCall c : calls) {
      ObjectNode call = a.addObject();
      call.put("id", c.id());
      call.put("type", "function");
      ObjectNode f = call.putObject("function");
      f.put("name", c.name());
      f.put("arguments", c.arguments());
    }
    return a;
  }

  /** The last streamed event with {@code stream_options.include_usage}: no choices, the usage. */
  static ObjectNode usageEvent(
      boolean chat,
      String id,
      String model,
      long created,
      List<Completion> choices,
      int perPrompt,
      boolean reasoning) {
    ObjectNode o = envelope(id, chat ? "chat.completion.chunk" : "text_completion", model, created);
    o.putArray("choices");
    o.set("usage", usage(choices, perPrompt, reasoning));
    return o;
  }
}
