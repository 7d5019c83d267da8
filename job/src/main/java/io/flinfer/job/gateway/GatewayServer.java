package io.flinfer.job.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.flinfer.avro.Completion;
import io.flinfer.avro.CompletionChunk;
import io.flinfer.avro.DeadLetter;
import io.flinfer.avro.PromptRequest;
import io.flinfer.avro.Usage;
import io.flinfer.operators.flink.ModelSource;
import io.flinfer.operators.request.RequestLimits;
import io.flinfer.operators.request.RequestValidator;
import io.flinfer.runtime.chat.ChatTemplate;
import io.flinfer.runtime.chat.ReasoningParser;
import io.flinfer.runtime.chat.ReasoningParsers;
import io.flinfer.runtime.chat.ToolCallFormat;
import io.flinfer.runtime.model.LlamaModel;
import io.flinfer.runtime.model.ModelLoader;
import io.flinfer.runtime.tokenizer.Tokenizer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * An OpenAI-compatible HTTP front door to the job: {@code POST /v1/completions} and {@code POST
 * /v1/chat/completions} (whole, or streamed as server-sent events), {@code GET /v1/models} and
 * {@code GET /health}. Each request (each of its {@code n} choices, {@link Choices}) becomes a
 * record on the prompts topic and is answered from the chunks and completions topics, so it
 * survives a restart of the job, and of the gateway: its id derives from the client's {@code
 * Idempotency-Key}, and the same key gets the same answer.
 */
public final class GatewayServer implements AutoCloseable {
  private static final ObjectMapper JSON = new ObjectMapper();

  private final HttpServer http;
  private final ExecutorService threads = Executors.newCachedThreadPool(r -> daemon(r));
  private final TopicBroker broker;
  private final LagGuard lag;
  private final ApiKeys keys;
  private final String model;
  private final Duration timeout;
  private final ModelSource source;
  private LlamaModel loaded;
  private RequestValidator validator;
  private ToolCallFormat toolCallFormat;
  private ReasoningParsers reasoningParsers;
  private Optional<ChatTemplate> chatTemplate;

  private GatewayServer(GatewaySettings s) throws IOException {
    this.broker = new TopicBroker(s.pipeline(), s.lookback(), s.keep());
    this.lag =
        new LagGuard(
            s.pipeline().bootstrapServers(),
            s.pipeline().promptsTopic(),
            s.pipeline().groupId(),
            s.maxLag());
    this.keys = s.apiKeys() == null ? ApiKeys.none() : ApiKeys.load(s.apiKeys());
    this.model = s.pipeline().modelId();
    this.timeout = s.requestTimeout();
    this.source = s.pipeline().model();
    this.http = HttpServer.create(new InetSocketAddress(s.host(), s.port()), 64);
    http.setExecutor(threads);
    http.createContext("/v1/completions", x -> serve(x, false, false));
    http.createContext("/v1/chat/completions", x -> serve(x, true, false));
    http.createContext("/v1/responses", x -> serve(x, true, true));
    http.createContext("/v1/models", this::models);
    http.createContext("/tokenize", x -> tokens(x, true));
    http.createContext("/detokenize", x -> tokens(x, false));
    http.createContext("/health", this::health);
    http.createContext(
        "/",
        x ->
            fail(
                x,
                new ApiError(
                    404,
                    "invalid_request_error",
                    null,
                    "not_found",
                    "No route " + x.getRequestMethod() + " " + x.getRequestURI().getPath())));
  }

  /** Starts serving; answers requests once the answers already on the topics have been read. */
  public static GatewayServer start(GatewaySettings s) throws Exception {
    GatewayServer g = new GatewayServer(s);
    g.broker.awaitCaughtUp(Duration.ofSeconds(60));
    g.http.start();
    return g;
  }

  /** The port it listens on. */
  public int port() {
    return http.getAddress().getPort();
  }

  /**
   * A completion, a chat completion, or ({@code responses}) a Responses API request, which is
   * served as the chat completion it amounts to and answered in its own form.
   */
  private void serve(HttpExchange x, boolean chat, boolean responses) throws IOException {
    try {
      JsonNode body = postedJson(x);
      String tenant = keys.tenant(x.getRequestHeaders().getFirst("Authorization"));
      ResponsesRequest asked = responses ? ResponsesRequest.parse(body) : null;
      OpenAiRequest request;
      try {
        request =
            OpenAiRequest.parse(responses ? asked.chat : body, chat, model, this::toolCallFormat);
      } catch (ApiError e) {
        throw responses ? ResponsesRequest.inResponsesTerms(e) : e;
      }
      if (keys.open() && request.user != null) {
        tenant = request.user; // without keys, the client's user names the cache namespace
      }
      String id = requestId(tenant, x.getRequestHeaders().getFirst("Idempotency-Key"));
      Choices choices = new Choices(id, request.choices);
      BlockingQueue<Object> events = new LinkedBlockingQueue<>();
      choices.ids().forEach(c -> broker.subscribe(c, events));
      try {
        List<PromptRequest> unanswered = new ArrayList<>();
        for (int i = 0; i < choices.size(); i++) {
          if (broker.answer(choices.ids().get(i)) == null) {
            unanswered.add(request.record(choices.ids().get(i), tenant, i));
          }
        }
        if (!unanswered.isEmpty()) {
          if (lag.overloaded()) {
            x.getResponseHeaders().set("Retry-After", "1");
            throw new ApiError(
                429,
                "rate_limit_exceeded",
                null,
                "rate_limit_exceeded",
                "The job is behind on its prompts; retry after a second.");
          }
          try {
            for (PromptRequest r : unanswered) {
              broker.send(r);
            }
          } catch (Exception e) {
            throw new ApiError(
                503,
                "server_error",
                null,
                "unavailable",
                "The prompts topic did not take the request: " + e.getMessage());
          }
        }
        long created = System.currentTimeMillis() / 1000;
        String responseId = (chat ? "chatcmpl-" : "cmpl-") + id;
        Tokenizer tokens = request.logprobs ? tokenizer() : null;
        if (request.echo) {
          request.decodeEchoes(ids -> tokenizer().decode(ids));
        }
        ReasoningParser reasoning =
            request.separateReasoning
                ? reasoningParsers().forKwargs(request.chatTemplateKwargs()).orElse(null)
                : null;
        if (request.stream) {
          String owner = tenant;
          PromptLogprobsAnswer[] prompts = promptLogprobsAnswers(request, choices.size());
          int[] promptLens = new int[choices.size()];
          for (int i = 0; i < promptLens.length; i++) {
            int[] ids = prompts == null ? null : promptIds(request, choices, tenant, i);
            promptLens[i] = ids == null ? -1 : ids.length;
          }
          EventStream stream =
              new EventStream(
                  x,
                  chat,
                  responseId,
                  model,
                  created,
                  choices,
                  i -> inOrder(request, choices, owner, i, tokens),
                  tokens != null,
                  prompts,
                  promptLens,
                  reasoning);
          if (responses) {
            stream.to(new ResponsesEvents(id, created, model, asked.body));
          }
          stream.serve(request, events, timeout);
        } else {
          InOrder[] chunks = new InOrder[choices.size()];
          for (int i = 0; i < chunks.length; i++) {
            chunks[i] = inOrder(request, choices, tenant, i, tokens);
          }
          PromptLogprobsAnswer[] prompts = promptLogprobsAnswers(request, chunks.length);
          List<Completion> answers = awaitAnswers(events, choices, chunks, prompts);
          if (request.promptOnly) {
            answers = answers.stream().map(GatewayServer::promptOnly).toList();
          }
          ObjectNode answer =
              OpenAiResponses.answer(chat, responseId, model, created, answers, request, reasoning);
          if (tokens != null) {
            for (int i = 0; i < chunks.length; i++) {
              // Only when every token was seen (not for an answer read back after a restart).
              ObjectNode lp =
                  chunks[i].tokens() == answers.get(i).getUsage().getCompletionTokens()
                      ? chunks[i].logprobs()
                      : null;
              ((ObjectNode) answer.at("/choices/" + i)).set("logprobs", lp);
            }
          }
          if (prompts != null) {
            // vLLM's places: the chat response's, each completion choice's.
            for (int i = 0; i < (chat ? 1 : prompts.length); i++) {
              ArrayNode scored = prompts[i].of(answers.get(i).getUsage().getPromptTokens());
              (chat ? answer : (ObjectNode) answer.at("/choices/" + i))
                  .set("prompt_logprobs", scored);
            }
          }
          reply(
              x,
              200,
              responses ? ResponsesAnswer.fromChat(answer, id, created, asked.body) : answer);
        }
      } finally {
        choices.ids().forEach(c -> broker.unsubscribe(c, events));
      }
    } catch (ApiError e) {
      fail(x, e);
    } finally {
      x.close();
    }
  }

  /**
   * How choice {@code i}'s chunks are taken: with its prompt's log-probabilities first where they
   * are asked for (echo with logprobs), their first token's text from the prompt's own tokens, as
   * the job tokenizes it.
   */
  private InOrder inOrder(
      OpenAiRequest request, Choices choices, String tenant, int i, Tokenizer tokens) {
    if (tokens == null) {
      return new InOrder(null);
    }
    TokenLogprobs logprobs = new TokenLogprobs(tokens, request.chat, request.tokensAsIds);
    int[] prompt = request.promptLogprobs() ? promptIds(request, choices, tenant, i) : null;
    return prompt == null
        ? new InOrder(logprobs)
        : new InOrder(logprobs, prompt, request.topLogprobs() > 0, request.promptOnly);
  }

  /** Choice {@code i}'s prompt tokens as the job tokenizes them, or null if it refuses them. */
  private int[] promptIds(OpenAiRequest request, Choices choices, String tenant, int i) {
    RequestValidator.Outcome o =
        validator().validate(request.record(choices.ids().get(i), tenant, i), 0);
    return o.ok() ? o.request().promptIds() : null;
  }

  /** A gatherer of vLLM's {@code prompt_logprobs} per choice, or null where none are asked. */
  private PromptLogprobsAnswer[] promptLogprobsAnswers(OpenAiRequest request, int choices) {
    if (!request.promptLogprobsApart()) {
      return null;
    }
    PromptLogprobsAnswer[] prompts = new PromptLogprobsAnswer[choices];
    for (int i = 0; i < choices; i++) {
      prompts[i] = new PromptLogprobsAnswer(tokenizer(), request.tokensAsIds);
    }
    return prompts;
  }

  /** {@code c} without its generated token: what {@code max_tokens: 0} asked for. */
  private static Completion promptOnly(Completion c) {
    if ("error".equals(c.getFinishReason())) {
      return c;
    }
    Usage u = c.getUsage();
    return Completion.newBuilder(c)
        .setText("")
        .setFinishReason("length")
        .setFinishDetail(null)
        .setToolCalls(List.of())
        .setReasoningContent(null)
        .setUsage(new Usage(u.getPromptTokens(), u.getCachedTokens(), 0, 0))
        .build();
  }

  /**
   * Every choice's completion, in choice order, each choice's chunks taken by its {@code chunks}
   * (and, when given, its prompt log-probabilities by its {@code prompts}); the first dead letter
   * of any choice is the request's error.
   */
  private List<Completion> awaitAnswers(
      BlockingQueue<Object> events,
      Choices choices,
      InOrder[] chunks,
      PromptLogprobsAnswer[] prompts)
      throws ApiError {
    Completion[] answers = new Completion[choices.size()];
    int left = answers.length;
    long end = System.nanoTime() + timeout.toNanos();
    try {
      while (left > 0) {
        Object e = events.poll(Math.max(0, end - System.nanoTime()), TimeUnit.NANOSECONDS);
        if (e == null) {
          throw timedOut(timeout);
        }
        int i = choices.of(e);
        if (i < 0) {
          continue;
        }
        if (e instanceof CompletionChunk c) {
          chunks[i].accept(c);
          if (prompts != null) {
            prompts[i].accept(c);
          }
        } else if (e instanceof Completion c) {
          if (answers[i] == null) {
            answers[i] = c;
            left--;
          }
        } else {
          throw rejected((DeadLetter) e);
        }
      }
      return List.of(answers);
    } catch (InterruptedException ie) {
      Thread.currentThread().interrupt();
      throw timedOut(timeout);
    }
  }

  /** The model's chat template, read from its file's metadata on first use (no weights). */
  private synchronized Optional<ChatTemplate> chatTemplate() {
    if (chatTemplate == null) {
      chatTemplate = ModelLoader.chatTemplate(Path.of(source.model()));
    }
    return chatTemplate;
  }

  /** How the model writes tool calls, read from its template on the first request with tools. */
  private synchronized ToolCallFormat toolCallFormat() {
    if (toolCallFormat == null) {
      toolCallFormat = chatTemplate().map(ToolCallFormat::of).orElse(ToolCallFormat.UNKNOWN);
    }
    return toolCallFormat;
  }

  /** How the model's thinking is told from its answers, read from its template when first asked. */
  private synchronized ReasoningParsers reasoningParsers() {
    if (reasoningParsers == null) {
      reasoningParsers = new ReasoningParsers(chatTemplate().orElse(null));
    }
    return reasoningParsers;
  }

  /**
   * The model, loaded on the first request that needs its tokenizer (log-probabilities' token text,
   * tokenizing).
   */
  private synchronized LlamaModel loaded() {
    if (loaded == null) {
      loaded = source.load();
    }
    return loaded;
  }

  private Tokenizer tokenizer() {
    return loaded().tokenizer();
  }

  /** The job's own validator, whose prompt tokens {@code /tokenize} answers with. */
  private synchronized RequestValidator validator() {
    if (validator == null) {
      validator = RequestValidator.forModel(loaded(), RequestLimits.defaults(), Set.of());
    }
    return validator;
  }

  /** The body of a POST, as JSON; a 405 for another method, a 400 for a body that is not JSON. */
  private static JsonNode postedJson(HttpExchange x) throws ApiError {
    if (!x.getRequestMethod().equals("POST")) {
      throw new ApiError(405, "invalid_request_error", null, "method_not_allowed", "Use POST.");
    }
    try {
      return JSON.readTree(x.getRequestBody());
    } catch (IOException e) {
      throw new ApiError(
          400, "invalid_request_error", null, "invalid_json", "The body is not valid JSON.");
    }
  }

  /** {@code POST /tokenize} and {@code /detokenize}, as vLLM serves them. */
  private void tokens(HttpExchange x, boolean tokenize) throws IOException {
    try {
      JsonNode body = postedJson(x);
      keys.tenant(x.getRequestHeaders().getFirst("Authorization"));
      reply(
          x,
          200,
          tokenize
              ? TokenizeApi.tokenize(
                  body, model, this::toolCallFormat, validator(), loaded().config().contextLength())
              : TokenizeApi.detokenize(body, model, tokenizer()));
    } catch (ApiError e) {
      fail(x, e);
    } finally {
      x.close();
    }
  }

  static ApiError timedOut(Duration timeout) {
    return new ApiError(
        504,
        "timeout",
        null,
        "timeout",
        "No answer within "
            + timeout.toSeconds()
            + " s. The request goes on: send it again with"
            + " the same Idempotency-Key to get its answer.");
  }

  static ApiError rejected(DeadLetter d) {
    return new ApiError(400, "invalid_request_error", null, d.getReason(), d.getError());
  }

  /** The request id: from the client's key (per tenant), or a fresh one. */
  static String requestId(String tenant, String idempotencyKey) {
    if (idempotencyKey == null || idempotencyKey.isBlank()) {
      return "oai-" + UUID.randomUUID().toString().replace("-", "");
    }
    try {
      byte[] h =
          MessageDigest.getInstance("SHA-256")
              .digest((tenant + "\n" + idempotencyKey).getBytes(StandardCharsets.UTF_8));
      return "oai-" + HexFormat.of().formatHex(h, 0, 16);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  /** {@code GET /v1/models}: the served model in a list; {@code /v1/models/ID}: it alone. */
  private void models(HttpExchange x) throws IOException {
    try {
      keys.tenant(x.getRequestHeaders().getFirst("Authorization"));
      String path = x.getRequestURI().getPath();
      String asked = path.startsWith("/v1/models/") ? path.substring("/v1/models/".length()) : "";
      ObjectNode m = JSON.createObjectNode();
      m.put("id", model);
      m.put("object", "model");
      m.put("created", 0);
      m.put("owned_by", "flinfer");
      if (!asked.isEmpty()) {
        if (!asked.equals(model)) {
          throw ApiError.modelNotFound(asked, model);
        }
        reply(x, 200, m);
        return;
      }
      ObjectNode o = JSON.createObjectNode();
      o.put("object", "list");
      o.putArray("data").add(m);
      reply(x, 200, o);
    } catch (ApiError e) {
      fail(x, e);
    } finally {
      x.close();
    }
  }

  private void health(HttpExchange x) throws IOException {
    try (x) {
      ObjectNode o = JSON.createObjectNode();
      o.put("status", broker.caughtUp() ? "ok" : "starting");
      reply(x, broker.caughtUp() ? 200 : 503, o);
    }
  }

  private static void fail(HttpExchange x, ApiError e) throws IOException {
    reply(x, e.status, e.body());
  }

  static void reply(HttpExchange x, int status, JsonNode body) throws IOException {
    byte[] bytes = JSON.writeValueAsBytes(body);
    x.getResponseHeaders().set("Content-Type", "application/json");
    x.sendResponseHeaders(status, bytes.length);
    try (OutputStream out = x.getResponseBody()) {
      out.write(bytes);
    }
  }

  private static Thread daemon(Runnable r) {
    Thread t = new Thread(r, "gateway-http");
    t.setDaemon(true);
    return t;
  }

  @Override
  public void close() throws Exception {
    http.stop(0);
    threads.shutdownNow();
    lag.close();
    broker.close();
  }
}
