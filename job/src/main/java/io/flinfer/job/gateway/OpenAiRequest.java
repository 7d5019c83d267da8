package io.flinfer.job.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import io.flinfer.avro.ChatMessage;
import io.flinfer.avro.PromptRequest;
import io.flinfer.avro.SamplingOptions;
import io.flinfer.avro.ToolCall;
import io.flinfer.operators.request.RequestValidator;
import io.flinfer.runtime.chat.ChatTemplate;
import io.flinfer.runtime.chat.ChatTemplateException;
import io.flinfer.runtime.chat.ToolCallFormat;
import io.flinfer.runtime.grammar.JsonSchemaGrammar;
import io.flinfer.runtime.grammar.ResponseFormat;
import io.flinfer.runtime.sampling.SamplingParams;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * An OpenAI completions or chat completions request body, checked and mapped to a {@link
 * PromptRequest} per choice: {@code max_tokens} (or {@code max_completion_tokens}), {@code
 * temperature}, {@code top_p}, {@code seed}, {@code stop}, {@code n}, {@code logprobs} (chat: with
 * {@code top_logprobs}), {@code frequency_penalty}, {@code presence_penalty}, {@code
 * response_format} ({@code text}, {@code json_object} or {@code json_schema}, on both endpoints),
 * {@code logit_bias}, SGLang's and vLLM's structured-output parameters ({@link StructuredOutputs}),
 * and vLLM's extensions {@code top_k}, {@code min_p}, {@code repetition_penalty}, {@code
 * ignore_eos}, {@code stop_token_ids} and {@code min_tokens}; chat's {@code tools}, {@code
 * tool_choice} and {@code parallel_tool_calls} ({@link Tools}), with tool messages and assistant
 * messages' {@code tool_calls}; and for reasoning models vLLM's and SGLang's {@code
 * chat_template_kwargs}, vLLM's {@code thinking_token_budget}, SGLang's {@code separate_reasoning},
 * and assistant messages' {@code reasoning_content} (or {@code reasoning}). A parameter the engine
 * cannot honour is a 400 naming it, never silently ignored.
 */
final class OpenAiRequest {
  private static final Set<String> COMMON =
      Set.of(
          "model",
          "max_tokens",
          "temperature",
          "top_p",
          "seed",
          "stop",
          "n",
          "stream",
          "stream_options",
          "user",
          "frequency_penalty",
          "presence_penalty",
          "logprobs",
          "top_logprobs",
          "top_k",
          "min_p",
          "repetition_penalty",
          "ignore_eos",
          "response_format",
          "logit_bias",
          "stop_token_ids",
          "min_tokens",
          "return_tokens_as_token_ids",
          "prompt_logprobs");
  private static final Set<String> COMPLETIONS = Set.of("prompt", "echo", "suffix", "best_of");
  private static final Set<String> CHAT =
      Set.of(
          "messages",
          "max_completion_tokens",
          "tools",
          "tool_choice",
          "parallel_tool_calls",
          "chat_template_kwargs",
          "separate_reasoning",
          "thinking_token_budget");

  /** The most choices ({@code n}) one request may ask for. */
  static final int MAX_CHOICES = 16;

  final boolean chat;
  final boolean stream;
  final boolean includeUsage;

  /**
   * Completions' {@code max_tokens: 0} with {@code echo}: the answer is the prompt alone (with its
   * log-probabilities, with {@code logprobs}), as OpenAI's legacy API scored prompts.
   */
  final boolean promptOnly;

  final boolean logprobs;

  /** The most choices (prompts times {@code n}) one completions request may ask for. */
  static final int MAX_PROMPT_CHOICES = 64;

  /**
   * How many choices: each prompt's {@code n} completions, prompt after prompt, each its own prompt
   * record.
   */
  final int choices;

  /** Completions of each prompt ({@code n}). */
  final int perPrompt;

  /** The client's {@code user}, or null. */
  final String user;

  /** The request's tools and what the model should do with them, or null. */
  final Tools tools;

  /** Completions' {@code echo}: whether each choice's text starts with its prompt. */
  final boolean echo;

  /**
   * Completions: the prompts, each a string or token ids ({@code List<Integer>}); chat: none (its
   * messages are in the record).
   */
  private final List<Object> prompts;

  /** The text of each prompt given as token ids, for {@link #echo}. */
  private final List<String> decodedEchoes = new ArrayList<>();

  /**
   * Chat: whether a thinking model's thinking is answered apart ({@code reasoning_content}) from
   * its content (SGLang's {@code separate_reasoning}, true by default), rather than in it.
   */
  final boolean separateReasoning;

  /**
   * vLLM's {@code return_tokens_as_token_ids}: the log-probabilities name each token {@code
   * token_id:N}, its id, rather than its text (which may not say which token it was).
   */
  final boolean tokensAsIds;

  private final PromptRequest.Builder request;

  private OpenAiRequest(
      boolean chat,
      boolean stream,
      boolean includeUsage,
      boolean logprobs,
      int perPrompt,
      List<Object> prompts,
      String user,
      Tools tools,
      boolean echo,
      boolean separateReasoning,
      boolean tokensAsIds,
      boolean promptOnly,
      PromptRequest.Builder request) {
    this.chat = chat;
    this.stream = stream;
    this.includeUsage = includeUsage;
    this.logprobs = logprobs;
    this.perPrompt = perPrompt;
    this.prompts = prompts;
    this.choices = perPrompt * Math.max(1, prompts.size());
    this.user = user;
    this.tools = tools;
    this.echo = echo;
    this.separateReasoning = separateReasoning;
    this.tokensAsIds = tokensAsIds;
    this.promptOnly = promptOnly;
    this.request = request;
  }

  /**
   * With {@link #echo}: the text choice {@code choice}'s answer starts with (its prompt); else
   * null.
   */
  String echo(int choice) {
    if (!echo) {
      return null;
    }
    Object prompt = prompts.get(choice / perPrompt);
    return prompt instanceof String text ? text : decodedEchoes.get(choice / perPrompt);
  }

  /**
   * Decodes the prompts given as token ids with {@code decode}, so {@link #echo} can answer their
   * text (called once, before the answer).
   */
  @SuppressWarnings("unchecked")
  void decodeEchoes(Function<int[], String> decode) {
    decodedEchoes.clear();
    for (Object prompt : prompts) {
      decodedEchoes.add(
          prompt instanceof List<?> ids
              ? decode.apply(((List<Integer>) ids).stream().mapToInt(Integer::intValue).toArray())
              : null);
    }
  }

  /** Completions' {@code echo} with {@code logprobs}: the prompts' log-probabilities come first. */
  boolean promptLogprobs() {
    return echo && logprobs;
  }

  /** vLLM's {@code prompt_logprobs}: the answer holds the prompt's log-probabilities apart. */
  boolean promptLogprobsApart() {
    return request.getPromptLogprobs() != null && !promptLogprobs();
  }

  /** Alternatives per token the answer's log-probabilities have. */
  int topLogprobs() {
    return request.getTopLogprobs();
  }

  /** Chat: the template's switches ({@code chat_template_kwargs}) as JSON text, or null. */
  String chatTemplateKwargs() {
    return request.getChatTemplateKwargs();
  }

  /**
   * The prompt record of choice {@code choice} of this request, with its id and tenant: completion
   * {@code choice % n} of prompt {@code choice / n}. With a seed, a prompt's completion i samples
   * with the seed plus i, so it is what a request of that prompt alone gets; without one, each
   * choice's seed derives from its own request id, as any request's does.
   */
  @SuppressWarnings("unchecked")
  PromptRequest record(String requestId, String tenant, int choice) {
    PromptRequest.Builder r =
        PromptRequest.newBuilder(request).setRequestId(requestId).setTenant(tenant);
    if (!prompts.isEmpty()) {
      Object prompt = prompts.get(choice / perPrompt);
      if (prompt instanceof String text) {
        r.setPrompt(text);
      } else {
        r.setPromptTokenIds((List<Integer>) prompt);
      }
    }
    int sample = choice % perPrompt;
    Long seed = r.getSampling().getSeed();
    if (sample > 0 && seed != null) {
      r.setSampling(SamplingOptions.newBuilder(r.getSampling()).setSeed(seed + sample).build());
    }
    return r.build();
  }

  /** A 404 unless the request names the served model (a 400 when it names none). */
  static void checkModel(JsonNode body, String servedModel) throws ApiError {
    String model = text(body, "model", true);
    if (!model.equals(servedModel)) {
      throw ApiError.modelNotFound(model, servedModel);
    }
  }

  static OpenAiRequest parse(JsonNode body, boolean chat, String servedModel) throws ApiError {
    return parse(body, chat, servedModel, () -> ToolCallFormat.UNKNOWN);
  }

  /**
   * @param format how the served model writes tool calls (asked only of requests with tools)
   */
  static OpenAiRequest parse(
      JsonNode body, boolean chat, String servedModel, Supplier<ToolCallFormat> format)
      throws ApiError {
    if (body == null || !body.isObject()) {
      throw new ApiError(
          400, "invalid_request_error", null, "invalid_json", "The body must be a JSON object.");
    }
    for (Iterator<String> it = body.fieldNames(); it.hasNext(); ) {
      String name = it.next();
      if (!COMMON.contains(name)
          && !StructuredOutputs.PARAMETERS.contains(name)
          && !(chat ? CHAT : COMPLETIONS).contains(name)) {
        throw ApiError.unsupported(name);
      }
    }
    checkModel(body, servedModel);
    int n = choices(body);
    // Chat: logprobs true, and top_logprobs alternatives (0-20); completions: logprobs N, the
    // chosen tokens with N alternatives each (0-5, as OpenAI's legacy API allows).
    boolean logprobs;
    int top;
    if (chat) {
      JsonNode lp = body.get("logprobs");
      if (lp != null && !lp.isNull() && !lp.isBoolean()) {
        throw ApiError.badParameter("logprobs", "must be true or false");
      }
      logprobs = lp != null && lp.asBoolean(false);
      Integer t = integer(body, "top_logprobs");
      top = t == null ? 0 : t;
      if (top < 0 || top > SamplingParams.MAX_TOP_LOGPROBS) {
        throw ApiError.badParameter(
            "top_logprobs", "must be between 0 and " + SamplingParams.MAX_TOP_LOGPROBS);
      }
      if (top > 0 && !logprobs) {
        throw ApiError.badParameter("top_logprobs", "needs logprobs set to true");
      }
    } else {
      if (body.hasNonNull("top_logprobs")) {
        throw ApiError.unsupported("top_logprobs");
      }
      Integer alternatives = integer(body, "logprobs");
      if (alternatives != null && (alternatives < 0 || alternatives > 5)) {
        throw ApiError.badParameter("logprobs", "must be between 0 and 5");
      }
      logprobs = alternatives != null;
      top = alternatives == null ? 0 : alternatives;
    }
    boolean echo = body.path("echo").asBoolean(false);
    boolean stream = body.path("stream").asBoolean(false);
    if (body.hasNonNull("suffix")) {
      throw ApiError.unsupported("suffix");
    }
    PromptRequest.Builder r = PromptRequest.newBuilder().setRequestId("").setStream(true);
    List<Object> prompts = List.of();
    if (chat) {
      r.setMessages(messages(body.get("messages")));
      r.setChatTemplateKwargs(chatTemplateKwargs(body.get("chat_template_kwargs")));
      Integer budget = integer(body, "thinking_token_budget");
      if (budget != null && budget < 0) {
        throw ApiError.badParameter("thinking_token_budget", "must be at least 0");
      }
      r.setThinkingTokenBudget(budget);
    } else {
      prompts = prompts(body.get("prompt"));
      if (prompts.size() * n > MAX_PROMPT_CHOICES) {
        throw ApiError.badParameter(
            "prompt",
            "the prompts times n must be at most "
                + MAX_PROMPT_CHOICES
                + ", got "
                + prompts.size() * n);
      }
    }
    Integer max = integer(body, chat ? "max_completion_tokens" : "max_tokens");
    if (max == null && chat) {
      max = integer(body, "max_tokens");
    }
    boolean promptOnly = max != null && max == 0 && echo && !chat;
    if (promptOnly && stream) {
      throw ApiError.badParameter(
          "max_tokens", "0 (the prompt alone, echoed) is answered whole, not streamed");
    }
    if (max != null && !promptOnly) {
      if (max < 1) {
        throw ApiError.badParameter(
            chat ? "max_completion_tokens" : "max_tokens",
            chat ? "must be at least 1" : "must be at least 1, or 0 with echo");
      }
      r.setMaxNewTokens(max);
    } else if (promptOnly) {
      // The job writes one token, which the answer leaves out.
      r.setMaxNewTokens(1);
    } else if (!chat) {
      r.setMaxNewTokens(16); // OpenAI's default for completions
    }
    SamplingOptions.Builder s = SamplingOptions.newBuilder();
    number(body, "temperature", 0, 2).ifPresent(v -> s.setTemperature(v));
    number(body, "top_p", 0, 1).ifPresent(v -> s.setTopP(v));
    number(body, "min_p", 0, 1).ifPresent(v -> s.setMinP(v));
    number(body, "frequency_penalty", -2, 2).ifPresent(v -> s.setFrequencyPenalty(v));
    number(body, "presence_penalty", -2, 2).ifPresent(v -> s.setPresencePenalty(v));
    number(body, "repetition_penalty", 0, 10).ifPresent(v -> s.setRepetitionPenalty(v));
    Integer topK = integer(body, "top_k");
    if (topK != null) {
      s.setTopK(Math.max(0, topK));
    }
    if (body.hasNonNull("seed")) {
      if (!body.get("seed").canConvertToLong()) {
        throw ApiError.badParameter("seed", "must be an integer");
      }
      long seed = body.get("seed").asLong();
      if (n > 1 && seed >= 0 && seed > RequestValidator.MAX_SEED - (n - 1)) {
        throw ApiError.badParameter(
            "seed", "with n = " + n + ", seed + " + (n - 1) + " must be below 2^53");
      }
      s.setSeed(seed);
    }
    r.setSampling(s.build());
    r.setStop(stop(body.get("stop")));
    r.setIgnoreEos(body.path("ignore_eos").asBoolean(false));
    r.setTopLogprobs(top);
    if (echo && logprobs) {
      // The prompt's tokens get theirs too, with as many alternatives.
      r.setPromptLogprobs(top);
    }
    Integer promptTop = integer(body, "prompt_logprobs");
    if (promptTop != null) {
      if (promptTop < 0 || promptTop > SamplingParams.MAX_TOP_LOGPROBS) {
        throw ApiError.badParameter(
            "prompt_logprobs", "must be between 0 and " + SamplingParams.MAX_TOP_LOGPROBS);
      }
      if (echo && logprobs) {
        throw ApiError.badParameter(
            "prompt_logprobs", "cannot be given with echo and logprobs, which score the prompt");
      }
      r.setPromptLogprobs(promptTop);
    }
    responseFormat(body.get("response_format"), r);
    boolean structured = StructuredOutputs.read(body, r);
    Tools tools = chat ? Tools.parse(body, format.get()) : null;
    if (tools != null && tools.choice != Tools.Choice.NONE) {
      r.setTools(tools.toolsJson);
      if (tools.schema != null) {
        if (structured) {
          throw ApiError.badParameter(
              "tool_choice", "cannot force a call beside a structured-output parameter");
        }
        r.setResponseFormat(ResponseFormat.JSON_SCHEMA.wireName());
        r.setJsonSchema(tools.schema);
      }
    }
    r.setLogitBias(logitBias(body.get("logit_bias")));
    r.setStopTokenIds(stopTokenIds(body.get("stop_token_ids")));
    Integer min = integer(body, "min_tokens");
    if (min != null) {
      if (min < 0 || min > r.getMaxNewTokens()) {
        throw ApiError.badParameter("min_tokens", "must be between 0 and the token limit");
      }
      r.setMinNewTokens(min);
    }
    boolean usage = body.path("stream_options").path("include_usage").asBoolean(false);
    String user = text(body, "user", false);
    if (user != null) {
      r.setMetadata(Map.of("user", user));
    }
    JsonNode separate = body.get("separate_reasoning");
    if (separate != null && !separate.isNull() && !separate.isBoolean()) {
      throw ApiError.badParameter("separate_reasoning", "must be true or false");
    }
    boolean separateReasoning = chat && (separate == null || separate.asBoolean(true));
    JsonNode asIds = body.get("return_tokens_as_token_ids");
    if (asIds != null && !asIds.isNull() && !asIds.isBoolean()) {
      throw ApiError.badParameter("return_tokens_as_token_ids", "must be true or false");
    }
    return new OpenAiRequest(
        chat,
        stream,
        usage,
        logprobs,
        n,
        prompts,
        user,
        tools,
        echo,
        separateReasoning,
        asIds != null && asIds.asBoolean(false),
        promptOnly,
        r);
  }

  /** The template's switches: a JSON object, kept as its text; null when not given. */
  private static String chatTemplateKwargs(JsonNode kwargs) throws ApiError {
    if (kwargs == null || kwargs.isNull()) {
      return null;
    }
    try {
      ChatTemplate.kwargs(kwargs.toString());
    } catch (ChatTemplateException e) {
      throw ApiError.badParameter("chat_template_kwargs", e.getMessage());
    }
    return kwargs.toString();
  }

  /**
   * {@code response_format} into the record: its type (text by default, json_object, or json_schema
   * with {@code json_schema.schema}, which must compile).
   */
  private static void responseFormat(JsonNode f, PromptRequest.Builder r) throws ApiError {
    if (f == null || f.isNull()) {
      return;
    }
    String type = f.isObject() && f.path("type").isTextual() ? f.get("type").asText() : null;
    if (type == null) {
      throw ApiError.badParameter("response_format", "must be an object with a type");
    }
    ResponseFormat format;
    try {
      format = ResponseFormat.of(type);
    } catch (IllegalArgumentException e) {
      format = ResponseFormat.REGEX; // named below
    }
    if (format == ResponseFormat.REGEX) {
      // Not an OpenAI type: a regex comes by its own parameter (StructuredOutputs).
      throw ApiError.badParameter(
          "response_format", "type must be text, json_object or json_schema");
    }
    r.setResponseFormat(format.wireName());
    if (format == ResponseFormat.JSON_SCHEMA) {
      JsonNode schema = f.path("json_schema").get("schema");
      if (schema == null || !schema.isObject()) {
        throw ApiError.badParameter("response_format", "json_schema.schema must be an object");
      }
      try {
        JsonSchemaGrammar.compile(schema.toString());
      } catch (IllegalArgumentException e) {
        throw ApiError.badParameter("response_format", e.getMessage());
      }
      r.setJsonSchema(schema.toString());
    }
  }

  /**
   * {@code logit_bias}: token ids (as strings) to biases in [-100, 100]; the job checks that each
   * id is in the vocabulary.
   */
  private static Map<String, Float> logitBias(JsonNode b) throws ApiError {
    if (b == null || b.isNull()) {
      return Map.of();
    }
    if (!b.isObject()) {
      throw ApiError.badParameter("logit_bias", "must map token ids to biases");
    }
    Map<String, Float> out = new LinkedHashMap<>();
    for (Map.Entry<String, JsonNode> e : b.properties()) {
      JsonNode v = e.getValue();
      if (!e.getKey().matches("[0-9]{1,9}")) {
        throw ApiError.badParameter("logit_bias", "keys must be token ids, got " + e.getKey());
      }
      if (!v.isNumber() || Math.abs(v.asDouble()) > SamplingParams.MAX_LOGIT_BIAS) {
        throw ApiError.badParameter("logit_bias", "biases must be numbers in [-100, 100]");
      }
      out.put(e.getKey(), (float) v.asDouble());
    }
    return out;
  }

  /** vLLM's {@code stop_token_ids}; the job checks that each is in the vocabulary. */
  private static List<Integer> stopTokenIds(JsonNode ids) throws ApiError {
    if (ids == null || ids.isNull()) {
      return List.of();
    }
    if (!ids.isArray()) {
      throw ApiError.badParameter("stop_token_ids", "must be an array of token ids");
    }
    List<Integer> out = new ArrayList<>();
    for (JsonNode id : ids) {
      if (!id.isIntegralNumber() || !id.canConvertToInt() || id.asInt() < 0) {
        throw ApiError.badParameter("stop_token_ids", "must be an array of token ids");
      }
      out.add(id.asInt());
    }
    return out;
  }

  /** {@code n}, checked; {@code best_of} may only repeat it (extra samples are not ranked). */
  private static int choices(JsonNode body) throws ApiError {
    Integer n = integer(body, "n");
    if (n == null) {
      n = 1;
    } else if (n < 1 || n > MAX_CHOICES) {
      throw ApiError.badParameter("n", "must be between 1 and " + MAX_CHOICES);
    }
    Integer bestOf = integer(body, "best_of");
    if (bestOf != null && bestOf != n.intValue()) {
      throw ApiError.badParameter(
          "best_of", "only equal to n is supported: extra samples are not ranked");
    }
    return n;
  }

  private static List<ChatMessage> messages(JsonNode m) throws ApiError {
    if (m == null || !m.isArray() || m.isEmpty()) {
      throw ApiError.badParameter("messages", "must be a non-empty array of messages");
    }
    List<ChatMessage> out = new ArrayList<>();
    for (int i = 0; i < m.size(); i++) {
      JsonNode message = m.get(i);
      String at = "messages[" + i + "]";
      String role = message.path("role").asText("");
      if (!Set.of("system", "developer", "user", "assistant", "tool").contains(role)) {
        throw ApiError.badParameter(
            at + ".role", "must be system, developer, user, assistant or tool");
      }
      List<ToolCall> calls = role.equals("assistant") ? toolCalls(message, at) : List.of();
      JsonNode content = message.get("content");
      StringBuilder text = new StringBuilder();
      if (content != null && content.isTextual()) {
        text.append(content.textValue());
      } else if (content != null && content.isArray()) {
        for (JsonNode part : content) {
          if (!"text".equals(part.path("type").asText())) {
            throw ApiError.badParameter(at + ".content", "only text content parts are supported");
          }
          text.append(part.path("text").asText());
        }
      } else if (calls.isEmpty() || (content != null && !content.isNull())) {
        throw ApiError.badParameter(at + ".content", "must be a string or parts");
      }
      String callId = null;
      if (role.equals("tool")) {
        callId = message.path("tool_call_id").asText(null);
        if (callId == null || !message.get("tool_call_id").isTextual()) {
          throw ApiError.badParameter(at + ".tool_call_id", "a tool message needs the call's id");
        }
      }
      out.add(
          ChatMessage.newBuilder()
              .setRole(role.equals("developer") ? "system" : role)
              .setContent(text.toString())
              .setToolCalls(calls)
              .setToolCallId(callId)
              .setReasoningContent(role.equals("assistant") ? reasoning(message, at) : null)
              .build());
    }
    return out;
  }

  /**
   * An assistant message's thinking, as vLLM and SGLang answer it ({@code reasoning_content}) or as
   * newer vLLM does ({@code reasoning}); null when it has none.
   */
  private static String reasoning(JsonNode message, String at) throws ApiError {
    for (String name : new String[] {"reasoning_content", "reasoning"}) {
      JsonNode v = message.get(name);
      if (v != null && !v.isNull()) {
        if (!v.isTextual()) {
          throw ApiError.badParameter(at + "." + name, "must be a string");
        }
        return v.textValue();
      }
    }
    return null;
  }

  /** An assistant message's {@code tool_calls}: each a function's name and its arguments. */
  private static List<ToolCall> toolCalls(JsonNode message, String at) throws ApiError {
    JsonNode calls = message.get("tool_calls");
    if (calls == null || calls.isNull()) {
      return List.of();
    }
    if (!calls.isArray()) {
      throw ApiError.badParameter(at + ".tool_calls", "must be an array of calls");
    }
    List<ToolCall> out = new ArrayList<>();
    for (int k = 0; k < calls.size(); k++) {
      JsonNode f = calls.get(k).path("function");
      if (!f.path("name").isTextual() || !f.path("arguments").isTextual()) {
        throw ApiError.badParameter(
            at + ".tool_calls[" + k + "].function", "needs a name and arguments (JSON text)");
      }
      JsonNode id = calls.get(k).get("id");
      out.add(
          new ToolCall(
              id != null && id.isTextual() ? id.textValue() : null,
              f.get("name").textValue(),
              f.get("arguments").textValue()));
    }
    return out;
  }

  /**
   * The completions API's {@code prompt}: a string, token ids, or an array of either (several
   * prompts), each a string or a list of token ids.
   */
  private static List<Object> prompts(JsonNode p) throws ApiError {
    String form = "must be a string, an array of token ids, or an array of either";
    if (p != null && p.isTextual()) {
      return List.of(p.textValue());
    }
    if (p == null || !p.isArray() || p.isEmpty()) {
      throw ApiError.badParameter("prompt", form);
    }
    if (p.get(0).isNumber()) {
      return List.of(tokenIds(p, "prompt"));
    }
    List<Object> out = new ArrayList<>();
    for (int i = 0; i < p.size(); i++) {
      JsonNode one = p.get(i);
      if (one.isTextual()) {
        out.add(one.textValue());
      } else if (one.isArray() && !one.isEmpty()) {
        out.add(tokenIds(one, "prompt[" + i + "]"));
      } else {
        throw ApiError.badParameter("prompt[" + i + "]", "must be a string or token ids");
      }
    }
    return out;
  }

  /** A prompt's token ids (the job checks them against the vocabulary). */
  private static List<Integer> tokenIds(JsonNode ids, String param) throws ApiError {
    List<Integer> out = new ArrayList<>(ids.size());
    for (JsonNode id : ids) {
      if (!id.isIntegralNumber() || !id.canConvertToInt()) {
        throw ApiError.badParameter(param, "token ids must be integers");
      }
      out.add(id.intValue());
    }
    return out;
  }

  private static List<String> stop(JsonNode s) throws ApiError {
    List<String> out = new ArrayList<>();
    if (s == null || s.isNull()) {
      return out;
    }
    if (s.isTextual()) {
      out.add(s.textValue());
      return out;
    }
    if (s.isArray() && s.size() <= 4) {
      for (JsonNode v : s) {
        if (!v.isTextual()) {
          throw ApiError.badParameter("stop", "must be a string or up to 4 strings");
        }
        out.add(v.textValue());
      }
      return out;
    }
    throw ApiError.badParameter("stop", "must be a string or up to 4 strings");
  }

  private static String text(JsonNode body, String name, boolean required) throws ApiError {
    JsonNode v = body.get(name);
    if (v == null || v.isNull()) {
      if (required) {
        throw new ApiError(
            400,
            "invalid_request_error",
            name,
            "missing_required_parameter",
            "Missing required parameter: '" + name + "'.");
      }
      return null;
    }
    if (!v.isTextual()) {
      throw ApiError.badParameter(name, "must be a string");
    }
    return v.textValue();
  }

  private static Integer integer(JsonNode body, String name) throws ApiError {
    JsonNode v = body.get(name);
    if (v == null || v.isNull()) {
      return null;
    }
    if (!v.isIntegralNumber() || !v.canConvertToInt()) {
      throw ApiError.badParameter(name, "must be an integer");
    }
    return v.intValue();
  }

  private static java.util.Optional<Float> number(JsonNode body, String name, double lo, double hi)
      throws ApiError {
    JsonNode v = body.get(name);
    if (v == null || v.isNull()) {
      return java.util.Optional.empty();
    }
    if (!v.isNumber() || v.doubleValue() < lo || v.doubleValue() > hi) {
      throw ApiError.badParameter(name, "must be a number in [" + lo + ", " + hi + "]");
    }
    return java.util.Optional.of(v.floatValue());
  }
}
