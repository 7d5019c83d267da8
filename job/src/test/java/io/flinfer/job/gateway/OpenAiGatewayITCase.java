package io.flinfer.job.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.core.JsonValue;
import com.openai.core.http.StreamResponse;
import com.openai.errors.BadRequestException;
import com.openai.errors.UnauthorizedException;
import com.openai.models.FunctionDefinition;
import com.openai.models.FunctionParameters;
import com.openai.models.ResponseFormatJsonObject;
import com.openai.models.ResponseFormatJsonSchema;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionAssistantMessageParam;
import com.openai.models.chat.completions.ChatCompletionChunk;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import com.openai.models.chat.completions.ChatCompletionMessageFunctionToolCall;
import com.openai.models.chat.completions.ChatCompletionNamedToolChoice;
import com.openai.models.chat.completions.ChatCompletionStreamOptions;
import com.openai.models.chat.completions.ChatCompletionTokenLogprob;
import com.openai.models.chat.completions.ChatCompletionToolChoiceOption;
import com.openai.models.chat.completions.ChatCompletionToolMessageParam;
import com.openai.models.completions.Completion;
import com.openai.models.completions.CompletionCreateParams;
import com.openai.models.responses.EasyInputMessage;
import com.openai.models.responses.FunctionTool;
import com.openai.models.responses.Response;
import com.openai.models.responses.ResponseCreateParams;
import com.openai.models.responses.ResponseFunctionToolCall;
import com.openai.models.responses.ResponseInputItem;
import com.openai.models.responses.ResponseOutputItem;
import com.openai.models.responses.ResponseStreamEvent;
import com.openai.models.responses.ToolChoiceFunction;
import io.flinfer.job.cli.BackgroundRun;
import io.flinfer.job.pipeline.PipelineSettings;
import io.flinfer.operators.flink.ModelSource;
import io.flinfer.runtime.gguf.GgufFile;
import io.flinfer.runtime.gguf.GgufTokenizers;
import io.flinfer.runtime.grammar.JsonPrefix;
import io.flinfer.runtime.grammar.JsonSchemaGrammar;
import io.flinfer.runtime.testing.SharedFiles;
import io.flinfer.runtime.tokenizer.Tokenizer;
import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The official OpenAI Java SDK against {@code flinfer run}'s gateway, serving a zoo model with its
 * chat template: completions, chat, streaming with usage, stop strings, errors, and a gateway
 * restarted mid-stream whose client retries with the same idempotency key.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(300)
class OpenAiGatewayITCase {
  private static final String MODEL = "qwen2-tiny.gguf";
  private static final String KEY = "sk-test-acme";

  @TempDir static Path dir;
  private BackgroundRun run;
  private int gatewayPort;
  private int kafkaPort;
  private OpenAIClient client;

  @BeforeAll
  void startRun() throws Exception {
    gatewayPort = BackgroundRun.freePort();
    kafkaPort = BackgroundRun.freePort();
    Path keys = Files.writeString(dir.resolve("keys"), "# key tenant\n" + KEY + " acme\n");
    run =
        new BackgroundRun(
            "--model",
            SharedFiles.root().resolve("models/zoo/" + MODEL).toString(),
            "--gateway-port",
            String.valueOf(gatewayPort),
            "--api-keys",
            keys.toString(),
            "--metrics-port",
            "0",
            "--web-port",
            "0",
            "--kafka-port",
            String.valueOf(kafkaPort),
            "--data-dir",
            dir.resolve("data").toString(),
            "--backend",
            "cpu");
    awaitHealthy(gatewayPort);
    client = client(gatewayPort, KEY);
  }

  @AfterAll
  void stopRun() throws Exception {
    assertThat(run.exitCode()).isZero();
  }

  private static OpenAIClient client(int port, String key) {
    return OpenAIOkHttpClient.builder()
        .apiKey(key)
        .baseUrl("http://127.0.0.1:" + port + "/v1")
        .maxRetries(0)
        .build();
  }

  private void awaitHealthy(int port) throws Exception {
    HttpClient http = HttpClient.newHttpClient();
    long end = System.currentTimeMillis() + 120_000;
    while (System.currentTimeMillis() < end) {
      if (run.isDone()) {
        throw new AssertionError("flinfer run ended: " + run.exitCode());
      }
      try {
        if (http.send(
                    HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/health"))
                        .build(),
                    HttpResponse.BodyHandlers.ofString())
                .statusCode()
            == 200) {
          return;
        }
      } catch (java.io.IOException notYet) {
        // starting
      }
      Thread.sleep(200);
    }
    throw new AssertionError("the gateway never became healthy");
  }

  private static CompletionCreateParams completion(String prompt, int maxTokens) {
    return CompletionCreateParams.builder()
        .model(MODEL)
        .prompt(prompt)
        .maxTokens(maxTokens)
        .temperature(0.0)
        .build();
  }

  private static ChatCompletionCreateParams chat(String message) {
    return ChatCompletionCreateParams.builder()
        .model(MODEL)
        .addSystemMessage("You are terse.")
        .addUserMessage(message)
        .maxCompletionTokens(12)
        .temperature(0.0)
        .streamOptions(ChatCompletionStreamOptions.builder().includeUsage(true).build())
        .build();
  }

  @Test
  void modelsListsTheServedModel() {
    assertThat(client.models().list().data()).extracting(m -> m.id()).containsExactly(MODEL);
    assertThat(client.models().retrieve(MODEL).id()).isEqualTo(MODEL);
    assertThatThrownBy(() -> client.models().retrieve("other"))
        .isInstanceOf(com.openai.errors.NotFoundException.class)
        .hasMessageContaining("does not exist");
  }

  @Test
  void completionsAndTheirStopStrings() {
    Completion whole = client.completions().create(completion("Once upon a time", 16));
    String text = whole.choices().get(0).text();
    assertThat(whole.usage().get().completionTokens()).isBetween(1L, 16L);
    assertThat(whole.usage().get().promptTokens()).isPositive();
    if (whole.usage().get().completionTokens() == 16) {
      assertThat(whole.choices().get(0).finishReason().asString()).isEqualTo("length");
    }
    // Greedy: the same request streamed adds up to the same text.
    StringBuilder streamed = new StringBuilder();
    try (StreamResponse<Completion> s =
        client.completions().createStreaming(completion("Once upon a time", 16))) {
      s.stream().forEach(c -> c.choices().forEach(ch -> streamed.append(ch.text())));
    }
    assertThat(streamed.toString()).isEqualTo(text);
    // A stop string cuts the text where it first occurs.
    int at = Math.max(1, text.length() / 2);
    while (at + 2 <= text.length() && text.substring(at, at + 2).isBlank()) {
      at++;
    }
    assertThat(at + 2)
        .as("a stop string to pick from '%s'", text)
        .isLessThanOrEqualTo(text.length());
    String stop = text.substring(at, at + 2);
    Completion stopped =
        client
            .completions()
            .create(completion("Once upon a time", 16).toBuilder().stop(stop).build());
    assertThat(stopped.choices().get(0).text()).isEqualTo(text.substring(0, text.indexOf(stop)));
    assertThat(stopped.choices().get(0).finishReason().asString()).isEqualTo("stop");

    // echo: the prompt, then the same completion; streamed alike.
    CompletionCreateParams echoed =
        completion("Once upon a time", 16).toBuilder().echo(true).build();
    assertThat(client.completions().create(echoed).choices().get(0).text())
        .isEqualTo("Once upon a time" + text);
    StringBuilder streamedEcho = new StringBuilder();
    try (StreamResponse<Completion> s = client.completions().createStreaming(echoed)) {
      s.stream().forEach(c -> c.choices().forEach(ch -> streamedEcho.append(ch.text())));
    }
    assertThat(streamedEcho.toString()).isEqualTo("Once upon a time" + text);
  }

  @Test
  void chatWholeAndStreamedWithUsage() {
    ChatCompletion whole = client.chat().completions().create(chat("Tell me a story."));
    String content = whole.choices().get(0).message().content().orElseThrow();
    assertThat(whole.usage().get().completionTokens()).isBetween(1L, 12L);
    StringBuilder streamed = new StringBuilder();
    List<ChatCompletionChunk> chunks = new ArrayList<>();
    try (StreamResponse<ChatCompletionChunk> s =
        client.chat().completions().createStreaming(chat("Tell me a story."))) {
      s.stream()
          .forEach(
              c -> {
                chunks.add(c);
                c.choices().forEach(ch -> ch.delta().content().ifPresent(streamed::append));
              });
    }
    assertThat(streamed.toString()).isEqualTo(content);
    ChatCompletionChunk last = chunks.get(chunks.size() - 1);
    assertThat(last.choices()).isEmpty();
    assertThat(last.usage().orElseThrow().completionTokens())
        .isEqualTo(whole.usage().get().completionTokens());
    assertThat(last.usage().orElseThrow().promptTokens())
        .isEqualTo(whole.usage().get().promptTokens());
  }

  /**
   * A JSON-object chat, whole and streamed: the answer is the start of one JSON object (the zoo's
   * random weights rarely close it within the limit), the same both ways, and one that stops is an
   * object to Jackson.
   */
  @Test
  void aJsonObjectChatAnswersWithTheStartOfOneObject() throws Exception {
    ChatCompletionCreateParams params =
        chat("Describe a cat as JSON.").toBuilder()
            .maxCompletionTokens(40)
            .responseFormat(ResponseFormatJsonObject.builder().build())
            .build();
    ChatCompletion whole = client.chat().completions().create(params);
    String content = whole.choices().get(0).message().content().orElseThrow();
    byte[] bytes = content.getBytes(StandardCharsets.UTF_8);
    assertThat(new JsonPrefix().accept(bytes, 0, bytes.length)).as(content).isTrue();
    assertThat(content.strip()).startsWith("{");
    if (whole.choices().get(0).finishReason().asString().equals("stop")) {
      assertThat(new ObjectMapper().readTree(content).isObject()).isTrue();
    }
    assertThat(streamedContent(params)).isEqualTo(content);

    // With a schema (the SDK's structured outputs): the answer starts an instance of it.
    String schema =
        "{\"type\": \"object\", \"properties\": {\"name\": {\"type\": \"string\"},"
            + " \"legs\": {\"type\": \"integer\", \"minimum\": 0, \"maximum\": 8},"
            + " \"born\": {\"type\": \"string\", \"format\": \"date\"}},"
            + " \"required\": [\"name\", \"legs\"],"
            + " \"additionalProperties\": false}";
    ResponseFormatJsonSchema.JsonSchema.Schema.Builder body =
        ResponseFormatJsonSchema.JsonSchema.Schema.builder();
    new ObjectMapper()
        .readTree(schema)
        .properties()
        .forEach(e -> body.putAdditionalProperty(e.getKey(), JsonValue.fromJsonNode(e.getValue())));
    ChatCompletion structured =
        client
            .chat()
            .completions()
            .create(
                params.toBuilder()
                    .responseFormat(
                        ResponseFormatJsonSchema.builder()
                            .jsonSchema(
                                ResponseFormatJsonSchema.JsonSchema.builder()
                                    .name("cat")
                                    .strict(true)
                                    .schema(body.build())
                                    .build())
                            .build())
                    .build());
    String answer = structured.choices().get(0).message().content().orElseThrow();
    byte[] answerBytes = answer.getBytes(StandardCharsets.UTF_8);
    assertThat(JsonSchemaGrammar.compile(schema).start().accept(answerBytes, 0, answerBytes.length))
        .as(answer)
        .isTrue();
    // Whitespace may come between (at most 16 bytes in a row): 40 tokens reach the first key.
    assertThat(answer.replaceAll("\\s+", "")).startsWith("{\"name\":");
  }

  /**
   * vLLM's guided_choice through the SDK's extra body (a conversation that does not think first):
   * the answer is one of the texts, ending where it is whole; SGLang's regex on a completion: the
   * text is the start of a match, and a match where it stopped; SGLang's ebnf: what the grammar
   * derives.
   */
  @Test
  void aChoiceAndARegexHoldTheAnswer() {
    List<String> choices = List.of("yes", "no", "maybe so");
    ChatCompletion chose =
        client
            .chat()
            .completions()
            .create(
                chat("Is the cat happy?").toBuilder()
                    .maxCompletionTokens(20)
                    .putAdditionalBodyProperty("guided_choice", JsonValue.from(choices))
                    // No thought first: the answer alone is held to the choice.
                    .putAdditionalBodyProperty(
                        "chat_template_kwargs", JsonValue.from(Map.of("enable_thinking", false)))
                    .build());
    assertThat(chose.choices().get(0).message().content().orElseThrow()).isIn(choices);
    assertThat(chose.choices().get(0).finishReason().asString()).isEqualTo("stop");

    String regex = "[A-Z][a-z]+( [a-z]+){1,3}\\.";
    Completion matched =
        client
            .completions()
            .create(
                completion("Once upon a time", 40).toBuilder()
                    .putAdditionalBodyProperty("regex", JsonValue.from(regex))
                    .build());
    String text = matched.choices().get(0).text();
    byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
    assertThat(
            io.flinfer.runtime.grammar.RegexGrammar.compile(regex)
                .start()
                .accept(bytes, 0, bytes.length))
        .as(text)
        .isTrue();
    if (matched.choices().get(0).finishReason().asString().equals("stop")) {
      assertThat(text).matches(regex);
    }

    // SGLang's ebnf: a grammar whose one derivation ends the text.
    Completion derived =
        client
            .completions()
            .create(
                completion("Once upon a time", 40).toBuilder()
                    .putAdditionalBodyProperty(
                        "ebnf",
                        JsonValue.from("root ::= \"The \" noun \".\"\nnoun ::= \"cat\" | \"dog\""))
                    .build());
    assertThat(derived.choices().get(0).text()).isIn("The cat.", "The dog.");
    assertThat(derived.choices().get(0).finishReason().asString()).isEqualTo("stop");
  }

  /** The content deltas of a streamed chat, joined. */
  private String streamedContent(ChatCompletionCreateParams params) {
    StringBuilder streamed = new StringBuilder();
    try (StreamResponse<ChatCompletionChunk> s =
        client.chat().completions().createStreaming(params)) {
      s.stream()
          .forEach(
              c -> c.choices().forEach(ch -> ch.delta().content().ifPresent(streamed::append)));
    }
    return streamed.toString();
  }

  /** The tool-call deltas of a streamed chat, in order. */
  private List<ChatCompletionChunk.Choice.Delta.ToolCall> streamedCalls(
      ChatCompletionCreateParams params) {
    try (StreamResponse<ChatCompletionChunk> s =
        client.chat().completions().createStreaming(params)) {
      return s.stream()
          .flatMap(c -> c.choices().stream())
          .flatMap(c -> c.delta().toolCalls().orElse(List.of()).stream())
          .toList();
    }
  }

  private static final String UNIT_PARAMETERS =
      "{\"type\": \"object\", \"properties\": {\"unit\": {\"enum\": [\"c\", \"f\"]},"
          + " \"exact\": {\"type\": \"boolean\"}}, \"required\": [\"unit\", \"exact\"]}";

  private static FunctionDefinition function(String name, String parametersJson) throws Exception {
    FunctionParameters.Builder p = FunctionParameters.builder();
    new ObjectMapper()
        .readTree(parametersJson)
        .properties()
        .forEach(e -> p.putAdditionalProperty(e.getKey(), JsonValue.fromJsonNode(e.getValue())));
    return FunctionDefinition.builder()
        .name(name)
        .description("Sets the " + name.replace('_', ' ') + ".")
        .parameters(p.build())
        .build();
  }

  private static ChatCompletionCreateParams withTools() throws Exception {
    return chat("Use celsius.").toBuilder()
        .maxCompletionTokens(200)
        .temperature(1.0)
        .seed(11)
        .addFunctionTool(function("set_unit", UNIT_PARAMETERS))
        .addFunctionTool(
            function(
                "set_mode",
                "{\"type\": \"object\", \"properties\": {\"mode\": {\"enum\": [\"on\","
                    + " \"off\"]}}}"))
        .build();
  }

  /**
   * A named function: the answer is that function's call, its arguments an instance of its
   * parameters; streamed, the arguments arrive in pieces that add up to the same call.
   */
  @Test
  void aNamedToolChoiceAnswersWithACallOfThatFunction() throws Exception {
    ChatCompletionCreateParams params =
        withTools().toBuilder()
            .toolChoice(
                ChatCompletionNamedToolChoice.builder()
                    .function(
                        ChatCompletionNamedToolChoice.Function.builder().name("set_unit").build())
                    .build())
            .build();
    ChatCompletion whole = client.chat().completions().create(params);
    ChatCompletion.Choice choice = whole.choices().get(0);
    assertThat(choice.finishReason().asString()).isEqualTo("stop");
    assertThat(choice.message().content()).isEmpty();
    var call = choice.message().toolCalls().orElseThrow().get(0).asFunction();
    assertThat(call.id()).startsWith("call_");
    assertThat(call.function().name()).isEqualTo("set_unit");
    var args = new ObjectMapper().readTree(call.function().arguments());
    assertThat(args.get("unit").asText()).isIn("c", "f");
    assertThat(args.get("exact").isBoolean()).isTrue();

    StringBuilder arguments = new StringBuilder();
    List<String> names = new ArrayList<>();
    for (var t : streamedCalls(params)) {
      assertThat(t.index()).isZero();
      t.function().flatMap(f -> f.name()).ifPresent(names::add);
      t.function().flatMap(f -> f.arguments()).ifPresent(arguments::append);
    }
    assertThat(names).containsExactly("set_unit");
    assertThat(arguments.toString()).isEqualTo(call.function().arguments());
  }

  /**
   * required, one call at most: the answer is a call of one of the tools, with arguments that are
   * an instance of that tool's parameters; streamed, the call arrives when its name is known and
   * its arguments in pieces that add up to the same call.
   */
  @Test
  void requiredAnswersWithACallOfOneOfTheTools() throws Exception {
    ChatCompletionCreateParams params =
        withTools().toBuilder()
            .toolChoice(ChatCompletionToolChoiceOption.Auto.REQUIRED)
            .parallelToolCalls(false)
            .build();
    ChatCompletion whole = client.chat().completions().create(params);
    ChatCompletion.Choice choice = whole.choices().get(0);
    assertThat(choice.finishReason().asString()).isEqualTo("tool_calls");
    var calls = choice.message().toolCalls().orElseThrow();
    assertThat(calls).hasSize(1);
    var call = calls.get(0).asFunction().function();
    var args = new ObjectMapper().readTree(call.arguments());
    if (call.name().equals("set_unit")) {
      assertThat(args.get("unit").asText()).isIn("c", "f");
    } else {
      assertThat(call.name()).isEqualTo("set_mode");
      assertThat(args.get("mode").asText()).isIn("on", "off");
    }
    // Streamed: the call as soon as its name is known, then its arguments in pieces.
    StringBuilder arguments = new StringBuilder();
    List<String> names = new ArrayList<>();
    var deltas = streamedCalls(params);
    for (var t : deltas) {
      assertThat(t.index()).isZero();
      t.function().flatMap(f -> f.name()).ifPresent(names::add);
      t.function().flatMap(f -> f.arguments()).ifPresent(arguments::append);
    }
    // Not whole at the end: the first delta names the call before its arguments are written.
    assertThat(deltas.size()).isGreaterThan(1);
    assertThat(deltas.get(0).function().orElseThrow().arguments().orElse(""))
        .hasSizeLessThan(call.arguments().length());
    assertThat(names).containsExactly(call.name());
    assertThat(arguments.toString()).isEqualTo(call.arguments());
  }

  /**
   * auto: the template gets the tools (the prompt grows by their text), and a conversation that
   * made a call and got its result goes on; the zoo model's random answer is content, streamed
   * alike.
   */
  @Test
  void autoOffersTheToolsAndAConversationWithCallsAndResultsGoesOn() throws Exception {
    ChatCompletion plain = client.chat().completions().create(chat("Use celsius."));
    ChatCompletion offered =
        client.chat().completions().create(withTools().toBuilder().maxCompletionTokens(12).build());
    assertThat(offered.usage().orElseThrow().promptTokens())
        .isGreaterThan(plain.usage().orElseThrow().promptTokens() + 50);

    ChatCompletionCreateParams followUp =
        withTools().toBuilder()
            .maxCompletionTokens(8)
            .addMessage(
                ChatCompletionAssistantMessageParam.builder()
                    .addToolCall(
                        ChatCompletionMessageFunctionToolCall.builder()
                            .id("call_1")
                            .function(
                                ChatCompletionMessageFunctionToolCall.Function.builder()
                                    .name("set_unit")
                                    .arguments("{\"unit\": \"c\", \"exact\": true}")
                                    .build())
                            .build())
                    .build())
            .addMessage(
                ChatCompletionToolMessageParam.builder()
                    .toolCallId("call_1")
                    .content("done")
                    .build())
            .build();
    ChatCompletion answer = client.chat().completions().create(followUp);
    assertThat(answer.usage().orElseThrow().promptTokens())
        .isGreaterThan(offered.usage().orElseThrow().promptTokens());
    ChatCompletion.Choice c = answer.choices().get(0);
    String content = c.message().content().orElse("");
    if (c.message().toolCalls().map(List::isEmpty).orElse(true)) {
      assertThat(streamedContent(followUp)).isEqualTo(content);
    }
    assertThatThrownBy(
            () ->
                client
                    .chat()
                    .completions()
                    .create(
                        withTools().toBuilder()
                            .toolChoice(
                                ChatCompletionNamedToolChoice.builder()
                                    .function(
                                        ChatCompletionNamedToolChoice.Function.builder()
                                            .name("missing")
                                            .build())
                                    .build())
                            .build()))
        .isInstanceOf(BadRequestException.class)
        .hasMessageContaining("names no function in tools: missing");
  }

  /** A bias of +100 on one token makes a greedy completion that token over and over. */
  @Test
  void aLogitBiasOfAHundredForcesItsToken() throws Exception {
    Tokenizer tok =
        GgufTokenizers.read(GgufFile.open(SharedFiles.root().resolve("models/zoo/" + MODEL)));
    int cat = tok.encode(" cat", false)[0];
    Completion c =
        client
            .completions()
            .create(
                completion("Once upon a time", 4).toBuilder()
                    .logitBias(
                        CompletionCreateParams.LogitBias.builder()
                            .putAdditionalProperty(String.valueOf(cat), JsonValue.from(100))
                            .build())
                    .build());
    assertThat(c.choices().get(0).text()).isEqualTo(tok.decode(new int[] {cat, cat, cat, cat}));
  }

  @Test
  void chatReportsTheChosenTokensLogProbabilities() {
    ChatCompletionCreateParams params = chat("Tell me a story.").toBuilder().logprobs(true).build();
    ChatCompletion whole = client.chat().completions().create(params);
    var tokens = whole.choices().get(0).logprobs().orElseThrow().content().orElseThrow();
    assertThat((long) tokens.size()).isEqualTo(whole.usage().get().completionTokens());
    assertThat(tokens).allSatisfy(t -> assertThat(t.logprob()).isLessThanOrEqualTo(0.0));
    assertThat(streamedTokens(params))
        .extracting(t -> t.logprob())
        .containsExactlyElementsOf(tokens.stream().map(t -> t.logprob()).toList());
    assertThatThrownBy(
            () ->
                client
                    .chat()
                    .completions()
                    .create(params.toBuilder().logprobs(false).topLogprobs(3).build()))
        .isInstanceOf(BadRequestException.class)
        .hasMessageContaining("top_logprobs");
  }

  /** The tokens' log-probabilities of a streamed chat answer, in order. */
  private List<ChatCompletionTokenLogprob> streamedTokens(ChatCompletionCreateParams params) {
    List<ChatCompletionTokenLogprob> out = new ArrayList<>();
    try (StreamResponse<ChatCompletionChunk> s =
        client.chat().completions().createStreaming(params)) {
      s.stream()
          .forEach(
              c ->
                  c.choices()
                      .forEach(
                          ch -> ch.logprobs().flatMap(l -> l.content()).ifPresent(out::addAll)));
    }
    return out;
  }

  private static String alternatives(ChatCompletionTokenLogprob t) {
    return t.topLogprobs().stream().map(a -> a.token() + "=" + a.logprob()).toList().toString();
  }

  @Test
  void chatAndCompletionsReportEachTokensAlternatives() {
    // Greedy: the chosen token is the likeliest, so it heads its own alternatives.
    ChatCompletionCreateParams params =
        chat("Tell me a story.").toBuilder().logprobs(true).topLogprobs(3).build();
    ChatCompletion whole = client.chat().completions().create(params);
    var tokens = whole.choices().get(0).logprobs().orElseThrow().content().orElseThrow();
    assertThat((long) tokens.size()).isEqualTo(whole.usage().get().completionTokens());
    for (var t : tokens) {
      assertThat(t.topLogprobs()).hasSize(3);
      assertThat(t.topLogprobs().get(0).token()).isEqualTo(t.token());
      assertThat(t.topLogprobs().get(0).logprob()).isEqualTo(t.logprob());
      assertThat(t.topLogprobs().get(0).bytes()).isEqualTo(t.bytes());
      assertThat(t.topLogprobs().get(1).logprob())
          .isLessThanOrEqualTo(t.topLogprobs().get(0).logprob());
      assertThat(t.topLogprobs().get(2).logprob())
          .isLessThanOrEqualTo(t.topLogprobs().get(1).logprob());
    }
    // Streamed, the same alternatives.
    assertThat(streamedTokens(params))
        .extracting(OpenAiGatewayITCase::alternatives)
        .containsExactlyElementsOf(tokens.stream().map(OpenAiGatewayITCase::alternatives).toList());
    // Completions: logprobs N gives each token's N alternatives by text.
    Completion c =
        client
            .completions()
            .create(completion("Once upon a time", 8).toBuilder().logprobs(2).build());
    var lp = c.choices().get(0).logprobs().orElseThrow();
    var alternatives = lp.topLogprobs().orElseThrow();
    assertThat(alternatives).hasSameSizeAs(lp.tokens().orElseThrow());
    for (int i = 0; i < alternatives.size(); i++) {
      java.util.Map<String, JsonValue> byText = alternatives.get(i)._additionalProperties();
      assertThat(byText).hasSizeBetween(1, 2).containsKey(lp.tokens().orElseThrow().get(i));
    }
  }

  @Test
  void nChoicesAreEachTheAnswerOfTheirOwnSeed() {
    CompletionCreateParams sampled =
        completion("Once upon a time", 12).toBuilder().temperature(1.0).seed(7).build();
    Completion three = client.completions().create(sampled.toBuilder().n(3).build());
    assertThat(three.choices()).extracting(c -> c.index()).containsExactly(0L, 1L, 2L);
    long completionTokens = 0;
    for (int i = 0; i < 3; i++) {
      // Choice i samples with seed 7 + i: the text a single request with that seed gets.
      Completion alone = client.completions().create(sampled.toBuilder().seed(7 + i).build());
      assertThat(three.choices().get(i).text())
          .as("choice %d", i)
          .isEqualTo(alone.choices().get(0).text());
      assertThat(three.choices().get(i).finishReason())
          .isEqualTo(alone.choices().get(0).finishReason());
      completionTokens += alone.usage().get().completionTokens();
      assertThat(three.usage().get().promptTokens()).isEqualTo(alone.usage().get().promptTokens());
    }
    // The prompt is counted once, the completions of every choice.
    assertThat(three.usage().get().completionTokens()).isEqualTo(completionTokens);
    assertThat(three.choices().stream().map(c -> c.text()).distinct().count())
        .as("three samples at temperature 1")
        .isGreaterThan(1);
  }

  /**
   * A completions prompt as token ids answers as its text does, and several prompts (text or token
   * ids) with n get n choices each, prompt after prompt, each what its prompt alone gets; the usage
   * counts each prompt once; streamed, the choices add up to the whole answer's.
   */
  @Test
  void promptsMayBeTokenIdsOrSeveral() throws Exception {
    JsonNode ids =
        post("/tokenize", "{\"model\": \"" + MODEL + "\", \"prompt\": \"Once upon a time\"}");
    List<Long> tokens = new ArrayList<>();
    ids.get("tokens").forEach(t -> tokens.add(t.asLong()));
    Completion text = client.completions().create(completion("Once upon a time", 8));
    Completion byIds =
        client
            .completions()
            .create(completion("", 8).toBuilder().promptOfArrayOfTokens(tokens).build());
    assertThat(byIds.choices().get(0).text()).isEqualTo(text.choices().get(0).text());
    assertThat(byIds.usage().orElseThrow().promptTokens())
        .isEqualTo(text.usage().orElseThrow().promptTokens());

    CompletionCreateParams several =
        completion("", 8).toBuilder()
            .promptOfArrayOfStrings(List.of("Once upon a time", "The cat"))
            .temperature(1.0)
            .seed(5)
            .n(2)
            .build();
    Completion four = client.completions().create(several);
    assertThat(four.choices()).extracting(c -> c.index()).containsExactly(0L, 1L, 2L, 3L);
    long promptTokens = 0;
    String[] prompts = {"Once upon a time", "The cat"};
    for (int k = 0; k < 4; k++) {
      Completion alone =
          client
              .completions()
              .create(
                  completion(prompts[k / 2], 8).toBuilder()
                      .temperature(1.0)
                      .seed(5 + k % 2)
                      .build());
      assertThat(four.choices().get(k).text())
          .as("choice %d", k)
          .isEqualTo(alone.choices().get(0).text());
      if (k % 2 == 0) {
        promptTokens += alone.usage().orElseThrow().promptTokens();
      }
    }
    assertThat(four.usage().orElseThrow().promptTokens()).isEqualTo(promptTokens);
    StringBuilder[] streamed = new StringBuilder[4];
    for (int k = 0; k < 4; k++) {
      streamed[k] = new StringBuilder();
    }
    try (StreamResponse<Completion> st = client.completions().createStreaming(several)) {
      st.stream()
          .forEach(c -> c.choices().forEach(ch -> streamed[(int) ch.index()].append(ch.text())));
    }
    for (int k = 0; k < 4; k++) {
      assertThat(streamed[k].toString()).as("choice %d", k).isEqualTo(four.choices().get(k).text());
    }
    // Several token-id prompts; a token id outside the vocabulary is the job's refusal.
    Completion mixed =
        client
            .completions()
            .create(
                completion("", 8).toBuilder()
                    .promptOfArrayOfTokenArrays(List.of(tokens, tokens))
                    .build());
    assertThat(mixed.choices())
        .extracting(c -> c.text())
        .containsOnly(text.choices().get(0).text());
    assertThatThrownBy(
            () ->
                client
                    .completions()
                    .create(
                        completion("", 8).toBuilder()
                            .promptOfArrayOfTokens(List.of(1L, 99_999_999L))
                            .build()))
        .isInstanceOf(BadRequestException.class);
  }

  @Test
  void nChoicesStreamInterleavedByIndexAndAddUpToTheWholeAnswer() {
    ChatCompletionCreateParams params =
        chat("Tell me a story.").toBuilder().temperature(1.0).seed(11).n(2).build();
    ChatCompletion whole = client.chat().completions().create(params);
    assertThat(whole.choices()).hasSize(2);
    StringBuilder[] streamed = {new StringBuilder(), new StringBuilder()};
    List<String> finishes = new ArrayList<>();
    List<ChatCompletionChunk> chunks = new ArrayList<>();
    try (StreamResponse<ChatCompletionChunk> s =
        client.chat().completions().createStreaming(params)) {
      s.stream()
          .forEach(
              c -> {
                chunks.add(c);
                c.choices()
                    .forEach(
                        ch -> {
                          ch.delta().content().ifPresent(streamed[(int) ch.index()]::append);
                          ch.finishReason().ifPresent(f -> finishes.add(ch.index() + ":" + f));
                        });
              });
    }
    for (int i = 0; i < 2; i++) {
      assertThat(streamed[i].toString())
          .as("choice %d", i)
          .isEqualTo(whole.choices().get(i).message().content().orElseThrow());
    }
    assertThat(finishes)
        .containsExactlyInAnyOrder(
            "0:" + whole.choices().get(0).finishReason().asString(),
            "1:" + whole.choices().get(1).finishReason().asString());
    ChatCompletionChunk last = chunks.get(chunks.size() - 1);
    assertThat(last.choices()).isEmpty();
    assertThat(last.usage().orElseThrow().completionTokens())
        .isEqualTo(whole.usage().get().completionTokens());
  }

  @Test
  void errorsNameTheParameterOrTheKey() {
    assertThatThrownBy(
            () -> client.completions().create(completion("Hi", 4).toBuilder().n(17).build()))
        .isInstanceOf(BadRequestException.class)
        .hasMessageContaining("n")
        .hasMessageContaining("between 1 and 16");
    assertThatThrownBy(
            () ->
                client
                    .completions()
                    .create(
                        completion("Hi", 4).toBuilder()
                            .putAdditionalBodyProperty("best_temperature", JsonValue.from(3))
                            .build()))
        .isInstanceOf(BadRequestException.class)
        .hasMessageContaining("best_temperature");
    assertThatThrownBy(() -> client(gatewayPort, "sk-wrong").models().list())
        .isInstanceOf(UnauthorizedException.class);
    // A request the job rejects comes back as a 400 with the job's reason.
    assertThatThrownBy(
            () -> client.completions().create(completion("Hi", 4).toBuilder().seed(-1).build()))
        .isInstanceOf(BadRequestException.class)
        .hasMessageContaining("sampling.seed");
  }

  @Test
  void aJobFarBehindMakesTheGatewayAnswer429() throws Exception {
    client.completions().create(completion("One", 2));
    client.completions().create(completion("Two", 2));
    // A group that has read nothing: every prompt on the topic counts as its lag.
    GatewaySettings behind =
        new GatewaySettings(
            pipeline(kafkaPort).groupId("never-reads").build(),
            "127.0.0.1",
            0,
            null,
            1,
            Duration.ofSeconds(30),
            Duration.ofHours(1),
            1000);
    try (GatewayServer g = GatewayServer.start(behind)) {
      HttpResponse<String> r =
          HttpClient.newHttpClient()
              .send(
                  HttpRequest.newBuilder(
                          URI.create("http://127.0.0.1:" + g.port() + "/v1/completions"))
                      .POST(
                          HttpRequest.BodyPublishers.ofString(
                              "{\"model\": \"" + MODEL + "\", \"prompt\": \"x\"}"))
                      .build(),
                  HttpResponse.BodyHandlers.ofString());
      assertThat(r.statusCode()).isEqualTo(429);
      assertThat(r.headers().firstValue("Retry-After")).contains("1");
      assertThatThrownBy(() -> client(g.port(), "unused").completions().create(completion("x", 2)))
          .isInstanceOf(com.openai.errors.RateLimitException.class);
    }
  }

  private static PipelineSettings.Builder pipeline(int kafkaPort) {
    return PipelineSettings.builder()
        .bootstrapServers("127.0.0.1:" + kafkaPort)
        .topics("flinfer.prompts", "flinfer.completions", "flinfer.chunks", "flinfer.dead-letters")
        .model(
            new ModelSource(SharedFiles.root().resolve("models/zoo/" + MODEL).toString(), null),
            MODEL);
  }

  @Test
  void aRetryWithTheSameKeyAfterAGatewayRestartGetsTheSameText() throws Exception {
    PipelineSettings pipeline = pipeline(kafkaPort).build();
    GatewaySettings settings =
        new GatewaySettings(
            pipeline, "127.0.0.1", 0, null, 0, Duration.ofSeconds(120), Duration.ofHours(1), 1000);
    String body =
        "{\"model\": \""
            + MODEL
            + "\", \"prompt\": \"The little dog\", \"max_tokens\": 200,"
            + " \"temperature\": 0, \"stream\": true}";
    int deltas = 0;
    try (GatewayServer first = GatewayServer.start(settings)) {
      HttpResponse<InputStream> r =
          HttpClient.newHttpClient()
              .send(
                  HttpRequest.newBuilder(
                          URI.create("http://127.0.0.1:" + first.port() + "/v1/completions"))
                      .header("Idempotency-Key", "story-7")
                      .POST(HttpRequest.BodyPublishers.ofString(body))
                      .build(),
                  HttpResponse.BodyHandlers.ofInputStream());
      BufferedReader events =
          new BufferedReader(new InputStreamReader(r.body(), StandardCharsets.UTF_8));
      for (String line = events.readLine(); line != null && deltas < 2; line = events.readLine()) {
        if (line.startsWith("data: {")) {
          deltas++;
        }
      }
    } // the gateway goes away mid-stream
    assertThat(deltas).isEqualTo(2);
    try (GatewayServer second = GatewayServer.start(settings)) {
      OpenAIClient again = client(second.port(), "unused");
      OpenAIClient sameKey = again.withOptions(o -> o.putHeader("Idempotency-Key", "story-7"));
      String retried =
          sameKey.completions().create(completion("The little dog", 200)).choices().get(0).text();
      StringBuilder streamed = new StringBuilder();
      try (StreamResponse<Completion> s =
          sameKey.completions().createStreaming(completion("The little dog", 200))) {
        s.stream().forEach(c -> c.choices().forEach(ch -> streamed.append(ch.text())));
      }
      String fresh =
          again.completions().create(completion("The little dog", 200)).choices().get(0).text();
      assertThat(retried).isNotEmpty().isEqualTo(fresh);
      assertThat(streamed.toString()).isEqualTo(fresh);
    }
  }

  // ---- the Responses API ----

  private static ResponseCreateParams.Builder respond(String input) {
    return ResponseCreateParams.builder()
        .model(MODEL)
        .instructions("You are terse.")
        .input(input)
        .maxOutputTokens(12)
        .temperature(0.0);
  }

  private static String outputText(Response r) {
    StringBuilder text = new StringBuilder();
    for (ResponseOutputItem item : r.output()) {
      item.message()
          .ifPresent(
              m -> m.content().forEach(c -> c.outputText().ifPresent(t -> text.append(t.text()))));
    }
    return text.toString();
  }

  /**
   * The Responses API answers as the chat completion of the same conversation (instructions as the
   * system turn): the same text and token counts, whole and streamed alike, the stream ending with
   * the whole response.
   */
  @Test
  void aResponseIsTheChatAnswerOfItsConversationWholeAndStreamed() {
    ChatCompletion chat = client.chat().completions().create(chat("Tell me a story"));
    Response whole = client.responses().create(respond("Tell me a story").build());
    assertThat(whole.id()).startsWith("resp_");
    assertThat(outputText(whole)).isEqualTo(chat.choices().get(0).message().content().orElse(""));
    assertThat(whole.usage().orElseThrow().inputTokens())
        .isEqualTo(chat.usage().orElseThrow().promptTokens());
    assertThat(whole.usage().orElseThrow().outputTokens())
        .isEqualTo(chat.usage().orElseThrow().completionTokens());
    // Twelve tokens of a random model: the limit ends it.
    assertThat(whole.status().orElseThrow().asString()).isEqualTo("incomplete");

    StringBuilder deltas = new StringBuilder();
    List<Response> last = new ArrayList<>();
    List<Long> sequence = new ArrayList<>();
    try (StreamResponse<ResponseStreamEvent> s =
        client.responses().createStreaming(respond("Tell me a story").build())) {
      s.stream()
          .forEach(
              e -> {
                e.outputTextDelta().ifPresent(d -> deltas.append(d.delta()));
                e.outputTextDelta().ifPresent(d -> sequence.add(d.sequenceNumber()));
                e.incomplete().ifPresent(d -> last.add(d.response()));
                e.completed().ifPresent(d -> last.add(d.response()));
              });
    }
    assertThat(deltas.toString()).isEqualTo(outputText(whole));
    assertThat(sequence).isSorted();
    assertThat(last).hasSize(1);
    assertThat(outputText(last.get(0))).isEqualTo(outputText(whole));
    assertThat(last.get(0).usage().orElseThrow().outputTokens())
        .isEqualTo(whole.usage().orElseThrow().outputTokens());
  }

  /**
   * A named function tool: the output is its call, whose arguments are an instance of its
   * parameters, streamed in pieces that add up to them; the call and its output, sent back as input
   * items, carry the conversation on.
   */
  @Test
  void aResponseCallsAFunctionAndTakesItsOutputBack() throws Exception {
    FunctionTool.Parameters.Builder p = FunctionTool.Parameters.builder();
    new ObjectMapper()
        .readTree(UNIT_PARAMETERS)
        .properties()
        .forEach(e -> p.putAdditionalProperty(e.getKey(), JsonValue.fromJsonNode(e.getValue())));
    ResponseCreateParams params =
        respond("Use celsius.")
            .maxOutputTokens(200)
            .temperature(1.0)
            .putAdditionalBodyProperty("seed", JsonValue.from(11)) // vLLM's extension, as chat's
            .addTool(
                FunctionTool.builder()
                    .name("set_unit")
                    .description("Sets the unit.")
                    .parameters(p.build())
                    .strict(true)
                    .build())
            .toolChoice(ToolChoiceFunction.builder().name("set_unit").build())
            .build();
    Response whole = client.responses().create(params);
    ResponseFunctionToolCall call =
        whole.output().stream().flatMap(i -> i.functionCall().stream()).findFirst().orElseThrow();
    assertThat(call.name()).isEqualTo("set_unit");
    assertThat(call.callId()).startsWith("call_");
    var args = new ObjectMapper().readTree(call.arguments());
    assertThat(args.get("unit").asText()).isIn("c", "f");

    List<String> pieces = new ArrayList<>();
    try (StreamResponse<ResponseStreamEvent> s = client.responses().createStreaming(params)) {
      s.stream().forEach(e -> e.functionCallArgumentsDelta().ifPresent(d -> pieces.add(d.delta())));
    }
    assertThat(pieces.size()).isGreaterThan(1);
    assertThat(String.join("", pieces)).isEqualTo(call.arguments());

    ResponseInputItem ask =
        ResponseInputItem.ofEasyInputMessage(
            EasyInputMessage.builder()
                .role(EasyInputMessage.Role.USER)
                .content("Use celsius.")
                .build());
    Response asked = client.responses().create(respond("").inputOfResponse(List.of(ask)).build());
    Response next =
        client
            .responses()
            .create(
                respond("")
                    .inputOfResponse(
                        List.of(
                            ask,
                            ResponseInputItem.ofFunctionCall(call),
                            ResponseInputItem.ofFunctionCallOutput(
                                ResponseInputItem.FunctionCallOutput.builder()
                                    .callId(call.callId())
                                    .output("done")
                                    .build())))
                    .build());
    // The call and its output reach the template: the prompt grows by them.
    assertThat(next.usage().orElseThrow().inputTokens())
        .isGreaterThan(asked.usage().orElseThrow().inputTokens() + 5);
    assertThat(next.output()).isNotEmpty();
  }

  /** What the gateway cannot honour is a 400 naming it: nothing is stored to continue from. */
  @Test
  void aResponseParameterThatCannotBeHonouredIsRefused() {
    assertThatThrownBy(
            () ->
                client.responses().create(respond("Hi").previousResponseId("resp_earlier").build()))
        .isInstanceOf(BadRequestException.class)
        .hasMessageContaining("previous_response_id");
  }

  // ---- prompt log-probabilities (echo with logprobs), as lm-evaluation-harness asks ----

  /**
   * Echo with logprobs scores the prompt's tokens: a prompt made of a greedy completion's own
   * tokens scores each of them with the log-probability and alternatives it was generated with, the
   * first prompt token's entries are null, and the answer then goes on as the completion did.
   */
  @Test
  void echoWithLogprobsScoresThePromptAsTheTokensWereGenerated() throws Exception {
    String prompt = "[9707, 11, 1879, 0, 358, 1079]";
    JsonNode made =
        post(
            "/v1/completions",
            "{\"model\": \""
                + MODEL
                + "\", \"prompt\": "
                + prompt
                + ", \"max_tokens\": 6,"
                + " \"temperature\": 0, \"logprobs\": 2, \"ignore_eos\": true,"
                + " \"return_tokens_as_token_ids\": true}");
    assertThat(made.path("status").asInt()).as(made.toString()).isEqualTo(200);
    JsonNode generated = made.at("/choices/0/logprobs");
    assertThat(generated.get("tokens")).hasSize(6);
    List<String> ids = new ArrayList<>();
    for (JsonNode t : generated.get("tokens")) {
      assertThat(t.asText()).startsWith("token_id:");
      ids.add(t.asText().substring("token_id:".length()));
    }
    // The prompt and the first five generated tokens, scored; one token more generated.
    String whole =
        prompt.substring(0, prompt.length() - 1)
            + ", "
            + String.join(", ", ids.subList(0, 5))
            + "]";
    JsonNode scored =
        oneMoreToken(
            whole, "\"logprobs\": 2, \"echo\": true, \"return_tokens_as_token_ids\": true");
    assertThat(scored.path("status").asInt()).as(scored.toString()).isEqualTo(200);
    JsonNode lp = scored.at("/choices/0/logprobs");
    assertThat(lp.get("tokens")).hasSize(12);
    assertThat(lp.get("token_logprobs").get(0).isNull()).isTrue();
    assertThat(lp.get("top_logprobs").get(0).isNull()).isTrue();
    assertThat(lp.at("/tokens/0").asText()).isEqualTo("token_id:9707");
    assertThat(lp.at("/tokens/6").asText()).isEqualTo("token_id:" + ids.get(0));
    for (int j = 0; j < 6; j++) {
      // Prompt position 6 + j holds generated token j (the last one generated again).
      int at = 6 + j;
      assertThat(lp.at("/tokens/" + at).asText()).isEqualTo("token_id:" + ids.get(j));
      assertThat(lp.get("token_logprobs").get(at).floatValue())
          .as("token %d", j)
          .isEqualTo(generated.get("token_logprobs").get(j).floatValue());
      assertThat(lp.get("top_logprobs").get(at)).isEqualTo(generated.get("top_logprobs").get(j));
      // lm-eval's is_greedy: each greedy token is its position's most likely.
      float best = Float.NEGATIVE_INFINITY;
      for (JsonNode v : lp.get("top_logprobs").get(at)) {
        best = Math.max(best, v.floatValue());
      }
      assertThat(lp.get("token_logprobs").get(at).floatValue()).isEqualTo(best);
    }
    for (int at = 1; at < 6; at++) {
      assertThat(lp.get("token_logprobs").get(at).floatValue()).isNegative();
      assertThat(lp.get("top_logprobs").get(at).size()).isBetween(1, 2);
    }
    assertThat(scored.at("/usage/prompt_tokens").asInt()).isEqualTo(11);
    assertThat(scored.at("/usage/completion_tokens").asInt()).isEqualTo(1);

    // max_tokens 0 with echo: the prompt alone, scored alike, as OpenAI's legacy API did.
    JsonNode only =
        post(
            "/v1/completions",
            "{\"model\": \""
                + MODEL
                + "\", \"prompt\": "
                + whole
                + ", \"max_tokens\": 0, \"echo\": true, \"logprobs\": 2,"
                + " \"return_tokens_as_token_ids\": true}");
    assertThat(only.path("status").asInt()).as(only.toString()).isEqualTo(200);
    JsonNode onlyLp = only.at("/choices/0/logprobs");
    assertThat(onlyLp.get("tokens")).hasSize(11);
    for (int at = 0; at < 11; at++) {
      assertThat(onlyLp.get("tokens").get(at)).isEqualTo(lp.get("tokens").get(at));
      assertThat(onlyLp.get("token_logprobs").get(at)).isEqualTo(lp.get("token_logprobs").get(at));
    }
    assertThat(only.at("/usage/completion_tokens").asInt()).isZero();
    assertThat(only.at("/usage/prompt_tokens").asInt()).isEqualTo(11);
    assertThat(only.at("/choices/0/finish_reason").asText()).isEqualTo("length");
    assertThat(scored.at("/choices/0/text").asText())
        .startsWith(only.at("/choices/0/text").asText());

    // vLLM's prompt_logprobs: the same figures, keyed by token id, with ranks.
    JsonNode apart = oneMoreToken(whole, "\"prompt_logprobs\": 2");
    assertThat(apart.path("status").asInt()).as(apart.toString()).isEqualTo(200);
    JsonNode entries = apart.at("/choices/0/prompt_logprobs");
    assertThat(entries).hasSize(11);
    assertThat(entries.get(0).isNull()).isTrue();
    JsonNode wholeIds = new ObjectMapper().readTree(whole);
    for (int at = 1; at < 11; at++) {
      JsonNode own = entries.get(at).get(wholeIds.get(at).asText());
      assertThat(own).as("position %d", at).isNotNull();
      assertThat(own.get("logprob").floatValue())
          .isEqualTo(lp.get("token_logprobs").get(at).floatValue());
      assertThat(own.get("rank").asInt()).isPositive();
      if (at >= 6) {
        assertThat(own.get("rank").asInt()).isEqualTo(1);
      }
      assertThat(entries.get(at).size()).isBetween(2, 3);
    }
    assertThat(apart.at("/choices/0/logprobs").isNull()).isTrue();
    JsonNode chatApart =
        post(
            "/v1/chat/completions",
            "{\"model\": \""
                + MODEL
                + "\", \"messages\": [{\"role\": \"user\", \"content\": \"Hi\"}],"
                + " \"max_tokens\": 2, \"prompt_logprobs\": 0}");
    assertThat(chatApart.path("status").asInt()).as(chatApart.toString()).isEqualTo(200);
    assertThat(chatApart.get("prompt_logprobs"))
        .hasSize(chatApart.at("/usage/prompt_tokens").asInt());
    assertThat(chatApart.get("prompt_logprobs").get(1).size()).isEqualTo(1);
    // Streamed: the prompt's text first with its log-probabilities, then the token's; together
    // the answer's.
    List<JsonNode> echoed =
        events(
            "{\"model\": \""
                + MODEL
                + "\", \"prompt\": "
                + whole
                + ", \"max_tokens\": 1, \"temperature\": 0, \"ignore_eos\": true, \"logprobs\": 2,"
                + " \"echo\": true, \"return_tokens_as_token_ids\": true, \"stream\": true}");
    assertThat(echoed.get(0).at("/choices/0/text").asText())
        .isEqualTo(only.at("/choices/0/text").asText());
    assertThat(echoed.get(0).at("/choices/0/logprobs/tokens")).isEqualTo(onlyLp.get("tokens"));
    assertThat(echoed.get(0).at("/choices/0/logprobs/token_logprobs"))
        .isEqualTo(onlyLp.get("token_logprobs"));
    List<JsonNode> tokensStreamed = new ArrayList<>();
    List<JsonNode> valuesStreamed = new ArrayList<>();
    StringBuilder text = new StringBuilder();
    for (JsonNode e : echoed) {
      text.append(e.at("/choices/0/text").asText());
      e.at("/choices/0/logprobs/tokens").forEach(tokensStreamed::add);
      e.at("/choices/0/logprobs/token_logprobs").forEach(valuesStreamed::add);
    }
    assertThat(text.toString()).isEqualTo(scored.at("/choices/0/text").asText());
    assertThat(tokensStreamed).containsExactlyElementsOf(lp.get("tokens"));
    assertThat(valuesStreamed).containsExactlyElementsOf(lp.get("token_logprobs"));
    // vLLM's prompt_logprobs streamed: once, with the choice's first event after them.
    List<JsonNode> apartStreamed =
        events(
            "{\"model\": \""
                + MODEL
                + "\", \"prompt\": "
                + whole
                + ", \"max_tokens\": 1, \"temperature\": 0, \"ignore_eos\": true,"
                + " \"prompt_logprobs\": 2, \"stream\": true}");
    List<JsonNode> carried =
        apartStreamed.stream()
            .map(e -> e.at("/choices/0/prompt_logprobs"))
            .filter(n -> !n.isMissingNode())
            .toList();
    assertThat(carried).containsExactly(entries);
  }

  /** The events of a streamed completion, in order, without the end. */
  private List<JsonNode> events(String body) throws Exception {
    HttpResponse<String> r =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + gatewayPort + "/v1/completions"))
                    .header("Authorization", "Bearer " + KEY)
                    .POST(HttpRequest.BodyPublishers.ofString(body))
                    .build(),
                HttpResponse.BodyHandlers.ofString());
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    List<JsonNode> out = new ArrayList<>();
    for (String line : r.body().split("\n")) {
      if (line.startsWith("data: ") && !line.equals("data: [DONE]")) {
        out.add(new ObjectMapper().readTree(line.substring("data: ".length())));
      }
    }
    return out;
  }

  /** A greedy completion of one token after the token-id {@code prompt}, with {@code more}. */
  private JsonNode oneMoreToken(String prompt, String more) throws Exception {
    return post(
        "/v1/completions",
        "{\"model\": \""
            + MODEL
            + "\", \"prompt\": "
            + prompt
            + ", \"max_tokens\": 1, \"temperature\": 0, \"ignore_eos\": true, "
            + more
            + "}");
  }

  // ---- vLLM's /tokenize and /detokenize ----

  private JsonNode post(String path, String body) throws Exception {
    HttpResponse<String> r =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + gatewayPort + path))
                    .header("Authorization", "Bearer " + KEY)
                    .POST(HttpRequest.BodyPublishers.ofString(body))
                    .build(),
                HttpResponse.BodyHandlers.ofString());
    JsonNode json = new ObjectMapper().readTree(r.body());
    return json instanceof com.fasterxml.jackson.databind.node.ObjectNode o
        ? o.put("status", r.statusCode())
        : json;
  }

  /**
   * A conversation or a prompt tokenizes to as many tokens as the job counts for it (the chat's and
   * the completion's prompt tokens), and the ids decode back to the rendered prompt.
   */
  @Test
  void tokenizeGivesThePromptTokensTheJobCounts() throws Exception {
    ChatCompletion chat = client.chat().completions().create(chat("Tell me a story"));
    JsonNode conversation =
        post(
            "/tokenize",
            "{\"model\": \""
                + MODEL
                + "\", \"messages\": [{\"role\": \"system\", \"content\": \"You are terse.\"},"
                + " {\"role\": \"user\", \"content\": \"Tell me a story\"}]}");
    assertThat(conversation.get("status").asInt()).as(conversation.toString()).isEqualTo(200);
    assertThat(conversation.get("count").asLong())
        .isEqualTo(chat.usage().orElseThrow().promptTokens());
    assertThat(conversation.get("tokens")).hasSize(conversation.get("count").asInt());
    JsonNode text =
        post(
            "/detokenize",
            "{\"model\": \"" + MODEL + "\", \"tokens\": " + conversation.get("tokens") + "}");
    // The turns' control tokens write no text, as in a completion's.
    assertThat(text.get("prompt").asText())
        .isEqualTo("system\nYou are terse.\nuser\nTell me a story\nassistant\n");

    Completion done = client.completions().create(completion("Once upon a time", 2));
    JsonNode prompt =
        post("/tokenize", "{\"model\": \"" + MODEL + "\", \"prompt\": \"Once upon a time\"}");
    assertThat(prompt.get("count").asLong()).isEqualTo(done.usage().orElseThrow().promptTokens());

    JsonNode refused =
        post(
            "/tokenize",
            "{\"model\": \"" + MODEL + "\", \"prompt\": \"x\", \"add_special_tokens\": false}");
    assertThat(refused.get("status").asInt()).isEqualTo(400);
    assertThat(refused.at("/error/param").asText()).isEqualTo("add_special_tokens");
    JsonNode outside =
        post("/detokenize", "{\"model\": \"" + MODEL + "\", \"tokens\": [1, 99999999]}");
    assertThat(outside.at("/error/param").asText()).isEqualTo("tokens[1]");
  }
}
