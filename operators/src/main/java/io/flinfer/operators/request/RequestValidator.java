package io.flinfer.operators.request;

import io.flinfer.avro.ChatMessage;
import io.flinfer.avro.PromptRequest;
import io.flinfer.avro.SamplingOptions;
import io.flinfer.operators.engine.Req;
import io.flinfer.runtime.chat.ChatTemplate;
import io.flinfer.runtime.chat.ReasoningParsers;
import io.flinfer.runtime.chat.ToolCall;
import io.flinfer.runtime.grammar.ResponseFormat;
import io.flinfer.runtime.grammar.Thinking;
import io.flinfer.runtime.model.LlamaModel;
import io.flinfer.runtime.sampling.SamplingParams;
import io.flinfer.runtime.tokenizer.Tokenizer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Turns a producer's {@link PromptRequest} into an engine request, or says exactly why it cannot be
 * served (the reason goes to the dead-letter topic). Owns the serving limits.
 *
 * <p>A request without a seed gets one derived from its id, so a replay or a restore after a
 * failure samples the same text.
 */
public final class RequestValidator {
  /** How much of an offending value an error message quotes. */
  private static final int QUOTE_BYTES = 64;

  private final Tokenizer tokenizer;
  private final Optional<ChatTemplate> chatTemplate;
  private final ReasoningParsers reasoningParsers;
  private final int contextLength;
  private final RequestLimits limits;
  private final int maxPromptBytes;
  private final Set<String> tenants;

  /**
   * @param tenants tenants allowed, or empty to allow any
   */
  public RequestValidator(
      Tokenizer tokenizer, int contextLength, RequestLimits limits, Set<String> tenants) {
    this(tokenizer, Optional.empty(), contextLength, limits, tenants);
  }

  /** Validates requests for {@code model}, whose chat template renders conversations. */
  public static RequestValidator forModel(
      LlamaModel model, RequestLimits limits, Set<String> tenants) {
    return new RequestValidator(
        model.tokenizer(), model.chatTemplate(), model.config().contextLength(), limits, tenants);
  }

  private RequestValidator(
      Tokenizer tokenizer,
      Optional<ChatTemplate> chatTemplate,
      int contextLength,
      RequestLimits limits,
      Set<String> tenants) {
    this.tokenizer = tokenizer;
    this.chatTemplate = chatTemplate;
    this.reasoningParsers = new ReasoningParsers(chatTemplate.orElse(null));
    this.contextLength = contextLength;
    this.limits = limits;
    this.maxPromptBytes = limits.promptBytesFor(contextLength);
    this.tenants = Set.copyOf(tenants);
  }

  /** The outcome: a request, or the reason there is none. */
  public record Outcome(ValidatedRequest request, Rejection rejection, String error) {
    public boolean ok() {
      return request != null;
    }
  }

  /**
   * Checks every limit before any work that grows with the input (tokenizing above all), then the
   * request's meaning.
   */
  public Outcome validate(PromptRequest r, long nowMillis) {
    String id = r.getRequestId();
    if (id == null || id.isEmpty()) {
      return invalid("request_id is empty");
    }
    String tenant = r.getTenant() == null ? "" : r.getTenant();
    Outcome over =
        firstOf(
            overLimit("request_id", id, limits.maxIdBytes()),
            overLimit("tenant", tenant, limits.maxIdBytes()),
            overLimit("routing_key", r.getRoutingKey(), limits.maxIdBytes()),
            metadataOverLimit(r.getMetadata()),
            stopsOverLimit(r),
            promptOverLimit(r));
    if (over != null) {
      return over;
    }
    if (!tenants.isEmpty() && !tenants.contains(tenant)) {
      return invalid("unknown tenant " + quote(tenant));
    }
    if (r.getDeadlineEpochMs() != null && r.getDeadlineEpochMs() <= nowMillis) {
      return invalid("deadline " + r.getDeadlineEpochMs() + " has passed");
    }
    for (int t : r.getStopTokenIds()) {
      if (t < 0 || t >= tokenizer.vocabSize()) {
        return invalid(
            "stop token " + t + " is outside the vocabulary of " + tokenizer.vocabSize());
      }
    }
    for (String key : r.getLogitBias().keySet()) {
      int t;
      try {
        t = biasedToken(key);
      } catch (IllegalArgumentException e) {
        return invalid(e.getMessage());
      }
      if (t >= tokenizer.vocabSize()) {
        return invalid(
            "logit_bias token " + t + " is outside the vocabulary of " + tokenizer.vocabSize());
      }
    }
    boolean hasText = r.getPrompt() != null;
    boolean hasIds = r.getPromptTokenIds() != null;
    boolean hasMessages = r.getMessages() != null;
    int forms = (hasText ? 1 : 0) + (hasIds ? 1 : 0) + (hasMessages ? 1 : 0);
    if (forms != 1) {
      return invalid(
          forms > 1
              ? "give one of prompt, prompt_token_ids and messages, not several"
              : "the prompt is missing (prompt, prompt_token_ids or messages)");
    }
    int[] ids;
    if (hasMessages) {
      if (r.getMessages().isEmpty()) {
        return invalid("messages is empty");
      }
      if (chatTemplate.isEmpty()) {
        return invalid("the model has no chat template: send prompt or prompt_token_ids");
      }
      if (r.getTools() != null && !chatTemplate.get().takesTools()) {
        return invalid("the model's chat template does not take tools");
      }
      try {
        // The template writes the turns' special tokens (and BOS where the family has one).
        String rendered =
            chatTemplate
                .get()
                .render(
                    conversation(r.getMessages()), r.getTools(), r.getChatTemplateKwargs(), true);
        ids = tokenizer.encode(rendered, false, true);
      } catch (IllegalArgumentException e) {
        return invalid(e.getMessage());
      }
    } else if (r.getTools() != null) {
      return invalid("tools are given to the model with messages, not with a prompt");
    } else if (r.getChatTemplateKwargs() != null) {
      return invalid("chat_template_kwargs go with messages, not with a prompt");
    } else if (r.getThinkingTokenBudget() != null) {
      return invalid("thinking_token_budget goes with messages, not with a prompt");
    } else if (hasText) {
      if (r.getPrompt().isEmpty()) {
        return invalid("the prompt is empty");
      }
      try {
        ids = tokenizer.encode(r.getPrompt(), tokenizer.addBos());
      } catch (IllegalArgumentException e) {
        return invalid(e.getMessage());
      }
    } else {
      List<Integer> given = r.getPromptTokenIds();
      if (given.isEmpty()) {
        return invalid("prompt_token_ids is empty");
      }
      ids = new int[given.size()];
      for (int i = 0; i < ids.length; i++) {
        int t = given.get(i);
        if (t < 0 || t >= tokenizer.vocabSize()) {
          return invalid(
              "prompt token "
                  + t
                  + " at "
                  + i
                  + " is outside the vocabulary of "
                  + tokenizer.vocabSize());
        }
        ids[i] = t;
      }
    }
    if (ids.length >= contextLength) {
      return new Outcome(
          null,
          Rejection.LIMIT_EXCEEDED,
          "the prompt has " + ids.length + " tokens; the context holds " + contextLength);
    }
    if (r.getMinNewTokens() < 0 || r.getMinNewTokens() > r.getMaxNewTokens()) {
      return invalid(
          "min_new_tokens must be in [0, max_new_tokens = "
              + r.getMaxNewTokens()
              + "], got "
              + r.getMinNewTokens());
    }
    if (r.getMaxNewTokens() < 1 || r.getMaxNewTokens() > limits.maxNewTokens()) {
      return invalid(
          "max_new_tokens must be in [1, "
              + limits.maxNewTokens()
              + "], got "
              + r.getMaxNewTokens());
    }
    if (r.getThinkingTokenBudget() != null && r.getThinkingTokenBudget() < 0) {
      return invalid("thinking_token_budget must be >= 0, got " + r.getThinkingTokenBudget());
    }
    Integer promptTop = r.getPromptLogprobs();
    if (promptTop != null && (promptTop < 0 || promptTop > SamplingParams.MAX_TOP_LOGPROBS)) {
      return invalid(
          "prompt_logprobs must be between 0 and "
              + SamplingParams.MAX_TOP_LOGPROBS
              + ", got "
              + promptTop);
    }
    if (promptTop != null && !r.getStream()) {
      return invalid("prompt_logprobs needs stream: they are sent on the chunks topic");
    }
    for (String s : r.getStop()) {
      if (s.isEmpty()) {
        return invalid("stop strings must not be empty");
      }
    }
    Long seed = r.getSampling().getSeed();
    if (seed != null && (seed < 0 || seed > MAX_SEED)) {
      return invalid("sampling.seed must be in [0, 2^53), so that every client reads it exactly");
    }
    Req req;
    try {
      req = toReq(r, ids, seedOf(r), new int[0], thinking(r, reasoningParsers));
    } catch (IllegalArgumentException e) {
      return invalid(e.getMessage());
    }
    return new Outcome(
        new ValidatedRequest(r, ids, RoutingKey.of(r.getRoutingKey(), tenant, ids), req),
        null,
        null);
  }

  private Outcome metadataOverLimit(Map<String, String> metadata) {
    if (metadata.size() > limits.maxMetadataEntries()) {
      return limit(
          "metadata has "
              + metadata.size()
              + " entries; the limit is "
              + limits.maxMetadataEntries());
    }
    long bytes = 0;
    for (Map.Entry<String, String> e : metadata.entrySet()) {
      bytes += Utf8.length(e.getKey()) + Utf8.length(e.getValue());
    }
    return bytes > limits.maxMetadataBytes()
        ? limit("metadata is " + bytes + " bytes; the limit is " + limits.maxMetadataBytes())
        : null;
  }

  private Outcome stopsOverLimit(PromptRequest r) {
    if (r.getStop().size() > limits.maxStopStrings()) {
      return limit(
          "stop has " + r.getStop().size() + " strings; the limit is " + limits.maxStopStrings());
    }
    for (String s : r.getStop()) {
      Outcome o = overLimit("a stop string", s, limits.maxStopStringBytes());
      if (o != null) {
        return o;
      }
    }
    return r.getStopTokenIds().size() > limits.maxStopTokenIds()
        ? limit(
            "stop_token_ids has "
                + r.getStopTokenIds().size()
                + " ids; the limit is "
                + limits.maxStopTokenIds())
        : null;
  }

  private static List<io.flinfer.runtime.chat.ChatMessage> conversation(List<ChatMessage> turns) {
    List<io.flinfer.runtime.chat.ChatMessage> out = new ArrayList<>(turns.size());
    for (ChatMessage m : turns) {
      List<ToolCall> calls = new ArrayList<>(m.getToolCalls().size());
      for (io.flinfer.avro.ToolCall c : m.getToolCalls()) {
        calls.add(new ToolCall(c.getId(), c.getName(), c.getArguments()));
      }
      out.add(
          new io.flinfer.runtime.chat.ChatMessage(
              m.getRole(), m.getContent(), calls, m.getToolCallId(), m.getReasoningContent()));
    }
    return out;
  }

  private Outcome promptOverLimit(PromptRequest r) {
    if (r.getPrompt() != null) {
      return overLimit("the prompt", r.getPrompt(), maxPromptBytes);
    }
    if (r.getMessages() != null) {
      long bytes = 0;
      for (ChatMessage m : r.getMessages()) {
        Outcome role = overLimit("a message's role", m.getRole(), limits.maxIdBytes());
        if (role != null) {
          return role;
        }
        bytes += Utf8.length(m.getContent());
        if (m.getReasoningContent() != null) {
          bytes += Utf8.length(m.getReasoningContent());
        }
        for (io.flinfer.avro.ToolCall c : m.getToolCalls()) {
          bytes += Utf8.length(c.getName()) + Utf8.length(c.getArguments());
        }
      }
      if (r.getTools() != null) {
        bytes += Utf8.length(r.getTools());
      }
      if (r.getChatTemplateKwargs() != null) {
        bytes += Utf8.length(r.getChatTemplateKwargs());
      }
      return bytes > maxPromptBytes
          ? limit("the messages and tools are " + bytes + " bytes; the limit is " + maxPromptBytes)
          : null;
    }
    List<Integer> ids = r.getPromptTokenIds();
    return ids != null && ids.size() >= contextLength
        ? limit("the prompt has " + ids.size() + " tokens; the context holds " + contextLength)
        : null;
  }

  private static Outcome overLimit(String what, String value, int maxBytes) {
    if (value == null) {
      return null;
    }
    long bytes = Utf8.length(value);
    return bytes > maxBytes
        ? limit(what + " is " + bytes + " bytes; the limit is " + maxBytes)
        : null;
  }

  private static Outcome firstOf(Outcome... outcomes) {
    for (Outcome o : outcomes) {
      if (o != null) {
        return o;
      }
    }
    return null;
  }

  /** A value for an error message, cut short. */
  private static String quote(String value) {
    return "'" + Utf8.truncate(value, QUOTE_BYTES) + "'";
  }

  /** The request's seed: its own, else one derived from its id. */
  public static long seedOf(PromptRequest r) {
    Long seed = r.getSampling().getSeed();
    return seed != null ? seed : seedOf(r.getRequestId());
  }

  /**
   * Whether a conversation's output may think before its shape holds (or, with a thinking budget,
   * before its free text): where the model's template writes thinking and the prompt did not close
   * the thought, as a reasoning parser lets it in vLLM and SGLang. A prompt never does, and free
   * text without a budget needs no answer.
   */
  public static Thinking thinking(PromptRequest r, ReasoningParsers parsers) {
    boolean text = ResponseFormat.TEXT.wireName().equals(r.getResponseFormat());
    if (r.getMessages() == null || (text && r.getThinkingTokenBudget() == null)) {
      return Thinking.NONE;
    }
    return parsers.thinking(r.getChatTemplateKwargs());
  }

  /**
   * The engine request for a producer's record: its prompt tokens, sampling with {@code seed},
   * limits and stops, the tenant as namespace, the tokens already {@code generated} (a request
   * restored from a checkpoint continues after them), and whether its shape holds after a thought
   * ({@link #thinking}).
   *
   * @throws IllegalArgumentException when a sampling option or limit is invalid
   */
  public static Req toReq(
      PromptRequest r, int[] promptIds, long seed, int[] generated, Thinking thinking) {
    SamplingOptions o = r.getSampling();
    SamplingParams params =
        SamplingParams.builder()
            .temperature(o.getTemperature())
            .topP(o.getTopP())
            .topK(o.getTopK())
            .minP(o.getMinP())
            .repetitionPenalty(o.getRepetitionPenalty())
            .frequencyPenalty(o.getFrequencyPenalty())
            .presencePenalty(o.getPresencePenalty())
            .seed(seed)
            .topLogprobs(r.getTopLogprobs())
            .minTokens(r.getMinNewTokens())
            .logitBias(biasedTokens(r.getLogitBias()), biases(r.getLogitBias()))
            .responseFormat(ResponseFormat.of(r.getResponseFormat()))
            .jsonSchema(r.getJsonSchema())
            .regex(r.getRegex())
            .grammar(r.getGrammar())
            .thinking(thinking)
            .thinkingBudget(
                r.getThinkingTokenBudget() == null
                    ? SamplingParams.NO_THINKING_BUDGET
                    : r.getThinkingTokenBudget())
            .build();
    int[] stopIds = r.getStopTokenIds().stream().mapToInt(Integer::intValue).toArray();
    return Req.builder(r.getRequestId(), promptIds)
        .params(params)
        .maxNewTokens(r.getMaxNewTokens())
        .stopStrings(r.getStop())
        .stopTokenIds(stopIds)
        .ignoreEos(r.getIgnoreEos())
        .namespace(r.getTenant() == null ? "" : r.getTenant())
        .generated(generated)
        .deadlineEpochMillis(r.getDeadlineEpochMs() == null ? 0 : r.getDeadlineEpochMs())
        .promptLogprobs(r.getPromptLogprobs() == null ? -1 : r.getPromptLogprobs())
        .build();
  }

  /**
   * A logit_bias key: a token id as a decimal string.
   *
   * @throws IllegalArgumentException naming the key otherwise
   */
  private static int biasedToken(String key) {
    try {
      int t = Integer.parseInt(key);
      if (t >= 0) {
        return t;
      }
    } catch (NumberFormatException e) {
      // named below
    }
    throw new IllegalArgumentException("logit_bias keys must be token ids, got " + quote(key));
  }

  private static int[] biasedTokens(Map<String, Float> bias) {
    return bias.keySet().stream().mapToInt(RequestValidator::biasedToken).toArray();
  }

  private static float[] biases(Map<String, Float> bias) {
    float[] out = new float[bias.size()];
    int i = 0;
    for (float b : bias.values()) {
      out[i++] = b;
    }
    return out;
  }

  /** Seeds stay below 2^53, where every JSON reader (JavaScript's included) reads them exactly. */
  public static final long MAX_SEED = (1L << 53) - 1;

  /**
   * A stable seed from {@code key} (a request id: the same on every replay or restore), below 2^53.
   */
  public static long seedOf(String key) {
    long h = 0x9E3779B97F4A7C15L;
    for (int i = 0; i < key.length(); i++) {
      h = (h ^ key.charAt(i)) * 0xBF58476D1CE4E5B9L;
    }
    return (h ^ (h >>> 31)) & MAX_SEED;
  }

  private static Outcome invalid(String message) {
    return new Outcome(null, Rejection.INVALID_REQUEST, message);
  }

  private static Outcome limit(String message) {
    return new Outcome(null, Rejection.LIMIT_EXCEEDED, message);
  }
}
