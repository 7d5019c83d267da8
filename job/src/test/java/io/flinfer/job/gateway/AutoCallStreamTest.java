package io.flinfer.job.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.core.JsonValue;
import com.openai.core.http.StreamResponse;
import com.openai.helpers.ChatCompletionAccumulator;
import com.openai.helpers.ResponseAccumulator;
import com.openai.models.FunctionDefinition;
import com.openai.models.FunctionParameters;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionChunk;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import com.openai.models.responses.FunctionTool;
import com.openai.models.responses.Response;
import com.openai.models.responses.ResponseCreateParams;
import com.openai.models.responses.ResponseOutputItem;
import com.openai.models.responses.ResponseStreamEvent;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.flinfer.avro.Completion;
import io.flinfer.avro.CompletionChunk;
import io.flinfer.avro.Provenance;
import io.flinfer.avro.Timings;
import io.flinfer.avro.Usage;
import io.flinfer.runtime.chat.ToolCall;
import io.flinfer.runtime.chat.ToolCallFormat;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@code tool_choice: auto} streamed to the official OpenAI Java SDK: the gateway's event stream
 * over a real HTTP server, fed the chunks and completion of an answer the model wrote (cut into
 * pieces at random), against the whole answer of the same completion. The calls go out as the model
 * writes them, and what the SDK accumulates is the whole answer.
 */
class AutoCallStreamTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String ID = "oai-auto";

  private HttpServer server;
  private volatile String text;
  private volatile String finish;
  private volatile long seed;
  private volatile ToolCallFormat format;

  @AfterEach
  void stop() {
    if (server != null) {
      server.stop(0);
    }
  }

  private OpenAIClient serve(ToolCallFormat f) throws IOException {
    format = f;
    server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.createContext("/v1/chat/completions", this::answer);
    server.createContext("/v1/responses", this::respond);
    server.start();
    return OpenAIOkHttpClient.builder()
        .apiKey("none")
        .baseUrl("http://127.0.0.1:" + server.getAddress().getPort() + "/v1")
        .maxRetries(0)
        .build();
  }

  /** The gateway's stream of one chat choice, without log-probabilities. */
  private static EventStream stream(HttpExchange x) {
    return new EventStream(
        x,
        true,
        "chatcmpl-1",
        "m",
        1,
        new Choices(ID, 1),
        i -> new InOrder(null),
        false,
        null,
        null,
        null);
  }

  /** The answer {@link #text} as the gateway gives it, whole or streamed. */
  private void answer(HttpExchange x) throws IOException {
    try {
      JsonNode body = JSON.readTree(x.getRequestBody());
      OpenAiRequest request = OpenAiRequest.parse(body, true, "m", () -> format);
      Completion done = completion();
      if (request.stream) {
        BlockingQueue<Object> events = new LinkedBlockingQueue<>(chunks(new Random(seed)));
        events.add(done);
        stream(x).serve(request, events, Duration.ofSeconds(10));
      } else {
        GatewayServer.reply(
            x,
            200,
            OpenAiResponses.answer(true, "chatcmpl-1", "m", 1, List.of(done), request, null));
      }
    } catch (ApiError e) {
      GatewayServer.reply(x, e.status, JSON.readTree("{}"));
    } finally {
      x.close();
    }
  }

  /** The answer {@link #text} as the gateway gives a Responses API request, whole or streamed. */
  private void respond(HttpExchange x) throws IOException {
    try {
      ResponsesRequest asked = ResponsesRequest.parse(JSON.readTree(x.getRequestBody()));
      OpenAiRequest request = OpenAiRequest.parse(asked.chat, true, "m", () -> format);
      Completion done = completion();
      if (request.stream) {
        BlockingQueue<Object> events = new LinkedBlockingQueue<>(chunks(new Random(seed)));
        events.add(done);
        stream(x)
            .to(new ResponsesEvents(ID, 1, "m", asked.body))
            .serve(request, events, Duration.ofSeconds(10));
      } else {
        ObjectNode chat =
            OpenAiResponses.answer(true, "chatcmpl-1", "m", 1, List.of(done), request, null);
        GatewayServer.reply(x, 200, ResponsesAnswer.fromChat(chat, ID, 1, asked.body));
      }
    } catch (ApiError e) {
      GatewayServer.reply(x, e.status, JSON.readTree("{}"));
    } finally {
      x.close();
    }
  }

  /** {@link #text} in pieces of one to five characters, one token each. */
  private List<CompletionChunk> chunks(Random rnd) {
    List<CompletionChunk> out = new ArrayList<>();
    for (int at = 0; at < text.length(); ) {
      int end = Math.min(text.length(), at + 1 + rnd.nextInt(5));
      out.add(
          CompletionChunk.newBuilder()
              .setRequestId(ID)
              .setIndex(out.size())
              .setTextDelta(text.substring(at, end))
              .setTokenIds(List.of(out.size()))
              .build());
      at = end;
    }
    return out;
  }

  private Completion completion() {
    return Completion.newBuilder()
        .setRequestId(ID)
        .setText(text)
        .setFinishReason(finish)
        .setUsage(new Usage(5, 0, text.length(), 0))
        .setTimings(Timings.newBuilder().build())
        .setProvenance(Provenance.newBuilder().build())
        .build();
  }

  private static ChatCompletionCreateParams params(boolean parallel) throws Exception {
    return ChatCompletionCreateParams.builder()
        .model("m")
        .addUserMessage("Use celsius, then switch it on.")
        .addTool(tool("set_unit"))
        .addTool(tool("set_mode"))
        .parallelToolCalls(parallel)
        .build();
  }

  private static com.openai.models.chat.completions.ChatCompletionFunctionTool tool(String name) {
    return com.openai.models.chat.completions.ChatCompletionFunctionTool.builder()
        .function(
            FunctionDefinition.builder()
                .name(name)
                .parameters(
                    FunctionParameters.builder()
                        .putAdditionalProperty("type", JsonValue.from("object"))
                        .build())
                .build())
        .build();
  }

  /** What the SDK accumulates from the stream, and how many tool-call deltas it took. */
  private record Streamed(ChatCompletion completion, int callDeltas) {}

  private static Streamed streamed(OpenAIClient client, ChatCompletionCreateParams params) {
    ChatCompletionAccumulator acc = ChatCompletionAccumulator.create();
    int deltas = 0;
    try (StreamResponse<ChatCompletionChunk> s =
        client.chat().completions().createStreaming(params)) {
      for (ChatCompletionChunk c : s.stream().toList()) {
        acc.accumulate(c);
        for (ChatCompletionChunk.Choice ch : c.choices()) {
          deltas += ch.delta().toolCalls().map(List::size).orElse(0);
        }
      }
    }
    return new Streamed(acc.chatCompletion(), deltas);
  }

  /** The choice's content, its calls as (id, name, arguments) and its finish reason. */
  private static List<String> summary(ChatCompletion c) {
    ChatCompletion.Choice ch = c.choices().get(0);
    List<String> out = new ArrayList<>();
    // A stream's first event opens the content with "": none and "" are alike.
    out.add("content=" + ch.message().content().orElse(""));
    for (var call : ch.message().toolCalls().orElse(List.of())) {
      var f = call.asFunction();
      out.add(f.id() + " " + f.function().name() + " " + f.function().arguments());
    }
    out.add("finish=" + ch.finishReason().asString());
    return out;
  }

  /**
   * For every cut of the answer into pieces: the SDK's accumulation of the stream is the whole
   * answer, and the calls came in more than one delta each (not whole at the end).
   */
  private List<String> streamsAsTheWholeAnswer(
      OpenAIClient client, ChatCompletionCreateParams params, String answer, String reason)
      throws Exception {
    text = answer;
    finish = reason;
    List<String> whole = summary(client.chat().completions().create(params));
    for (long s = 0; s < 12; s++) {
      seed = s;
      Streamed st = streamed(client, params);
      assertThat(summary(st.completion())).as("pieces cut by seed %d", s).isEqualTo(whole);
      int calls = whole.size() - 2;
      if (calls > 0) {
        assertThat(st.callDeltas()).isGreaterThan(calls);
      }
    }
    return whole;
  }

  @Test
  void hermesCallsStreamAsTheModelWritesThem() throws Exception {
    OpenAIClient client = serve(ToolCallFormat.HERMES);
    String two =
        "Let me set both.\n<tool_call>\n{\"name\": \"set_unit\", \"arguments\": {\"unit\": \"c\","
            + " \"exact\": true}}\n</tool_call>\n<tool_call>\n{\"name\": \"set_mode\","
            + " \"arguments\": {\"mode\": \"on\"}}\n</tool_call>";
    String unit = ToolCall.idFor(ID, 0) + " set_unit {\"unit\": \"c\", \"exact\": true}";
    assertThat(streamsAsTheWholeAnswer(client, params(true), two, "stop"))
        .containsExactly(
            "content=Let me set both.",
            unit,
            ToolCall.idFor(ID, 1) + " set_mode {\"mode\": \"on\"}",
            "finish=tool_calls");
    // One call at a time: the first only, streamed alike.
    assertThat(streamsAsTheWholeAnswer(client, params(false), two, "stop"))
        .containsExactly("content=Let me set both.", unit, "finish=tool_calls");
    // Cut short inside the second call's arguments: both, the second as far as it got.
    assertThat(
            streamsAsTheWholeAnswer(
                client, params(true), two.substring(0, two.length() - 20), "length"))
        .containsExactly(
            "content=Let me set both.",
            unit,
            ToolCall.idFor(ID, 1) + " set_mode {\"mode\":",
            "finish=length");
    // Content only, without the blanks at its ends.
    assertThat(
            streamsAsTheWholeAnswer(
                client, params(true), "\n It is 21 degrees < 25,\n so it is on.\n", "stop"))
        .containsExactly("content=It is 21 degrees < 25,\n so it is on.", "finish=stop");
  }

  @Test
  void llamaJsonCallsStreamAsTheModelWritesThem() throws Exception {
    OpenAIClient client = serve(ToolCallFormat.LLAMA3_JSON);
    assertThat(
            streamsAsTheWholeAnswer(
                client,
                params(true),
                "<|python_tag|>{\"name\": \"set_unit\", \"parameters\": {\"unit\": \"f\"}};"
                    + " {\"name\": \"set_mode\", \"parameters\": {\"mode\": \"off\"}}",
                "stop"))
        .containsExactly(
            "content=",
            ToolCall.idFor(ID, 0) + " set_unit {\"unit\": \"f\"}",
            ToolCall.idFor(ID, 1) + " set_mode {\"mode\": \"off\"}",
            "finish=tool_calls");
    // A call whose arguments never began is no call: the text is content.
    String begun = "{\"name\": \"set_unit\", \"param";
    assertThat(streamsAsTheWholeAnswer(client, params(true), begun, "length"))
        .containsExactly("content=" + begun, "finish=length");
    assertThat(streamsAsTheWholeAnswer(client, params(true), "{\"answer\": 42}", "stop"))
        .containsExactly("content={\"answer\": 42}", "finish=stop");
  }

  /** A response's items: each message's text, each call's id, name and arguments. */
  private static List<String> items(Response r) {
    List<String> out = new ArrayList<>();
    for (ResponseOutputItem item : r.output()) {
      item.message()
          .ifPresent(
              m ->
                  out.add(
                      "message "
                          + m.content().stream()
                              .flatMap(c -> c.outputText().stream())
                              .map(t -> t.text())
                              .reduce("", String::concat)));
      item.functionCall()
          .ifPresent(c -> out.add(c.callId() + " " + c.name() + " " + c.arguments()));
    }
    out.add("status=" + r.status().map(Object::toString).orElse(""));
    return out;
  }

  /**
   * The Responses API streams auto calls alike: the stream's own events accumulate to the whole
   * response's items, each call's arguments arriving in more than one delta.
   */
  @Test
  void responsesStreamAutoCallsAsTheModelWritesThem() throws Exception {
    OpenAIClient client = serve(ToolCallFormat.HERMES);
    text =
        "Both.\n<tool_call>\n{\"name\": \"set_unit\", \"arguments\": {\"unit\": \"c\"}}\n"
            + "</tool_call>\n<tool_call>\n{\"name\": \"set_mode\", \"arguments\": {\"mode\":"
            + " \"on\"}}\n</tool_call>";
    finish = "stop";
    ResponseCreateParams params =
        ResponseCreateParams.builder()
            .model("m")
            .input("Use celsius, then switch it on.")
            .addTool(
                FunctionTool.builder().name("set_unit").parameters(objects()).strict(false).build())
            .addTool(
                FunctionTool.builder().name("set_mode").parameters(objects()).strict(false).build())
            .build();
    List<String> whole = items(client.responses().create(params));
    assertThat(whole)
        .containsExactly(
            "message Both.",
            ToolCall.idFor(ID, 0) + " set_unit {\"unit\": \"c\"}",
            ToolCall.idFor(ID, 1) + " set_mode {\"mode\": \"on\"}",
            "status=completed");
    for (long s = 0; s < 6; s++) {
      seed = s;
      ResponseAccumulator acc = ResponseAccumulator.create();
      int pieces = 0;
      try (StreamResponse<ResponseStreamEvent> st = client.responses().createStreaming(params)) {
        for (ResponseStreamEvent e : st.stream().toList()) {
          acc.accumulate(e);
          pieces += e.functionCallArgumentsDelta().isPresent() ? 1 : 0;
        }
      }
      assertThat(items(acc.response())).as("pieces cut by seed %d", s).isEqualTo(whole);
      assertThat(pieces).isGreaterThan(2);
    }
  }

  private static FunctionTool.Parameters objects() {
    return FunctionTool.Parameters.builder()
        .putAdditionalProperty("type", JsonValue.from("object"))
        .build();
  }
}
