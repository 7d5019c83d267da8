package io.flinfer.job.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.flinfer.job.cli.BackgroundRun;
import io.flinfer.runtime.testing.SharedFiles;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A thinking model (the zoo's Qwen3, whose template writes {@code <think>}) behind {@code flinfer
 * run}'s gateway: its thinking answered as {@code reasoning_content}, whole and streamed, or left
 * in the content when the request says so; {@code chat_template_kwargs} and earlier turns'
 * reasoning reaching the template. The random-weight model is made to think by a logit bias on
 * {@code <think>}, which it then writes at every step, so its output opens a thought that never
 * closes.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(300)
class ReasoningGatewayITCase {
  private static final String MODEL = "qwen3-tiny.gguf";
  private static final int THINK = 151667; // <think> in Qwen3's vocabulary
  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir static Path dir;
  private BackgroundRun run;
  private int port;
  private final HttpClient http = HttpClient.newHttpClient();

  @BeforeAll
  void startRun() throws Exception {
    port = BackgroundRun.freePort();
    run =
        new BackgroundRun(
            "--model",
            SharedFiles.root().resolve("models/zoo/" + MODEL).toString(),
            "--gateway-port",
            String.valueOf(port),
            "--metrics-port",
            "0",
            "--web-port",
            "0",
            "--kafka-port",
            String.valueOf(BackgroundRun.freePort()),
            "--data-dir",
            dir.resolve("data").toString(),
            "--backend",
            "cpu");
    long end = System.currentTimeMillis() + 120_000;
    while (true) {
      if (run.isDone()) {
        throw new AssertionError("flinfer run ended: " + run.exitCode());
      }
      try {
        if (get("/health").statusCode() == 200) {
          break;
        }
      } catch (java.io.IOException notYet) {
        // starting
      }
      if (System.currentTimeMillis() > end) {
        throw new AssertionError("the gateway never became healthy");
      }
      Thread.sleep(200);
    }
  }

  @AfterAll
  void stopRun() throws Exception {
    assertThat(run.exitCode()).isZero();
  }

  private HttpResponse<String> get(String path) throws Exception {
    return http.send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private HttpResponse<String> post(ObjectNode body) throws Exception {
    return post("/v1/chat/completions", body);
  }

  private HttpResponse<String> post(String path, ObjectNode body) throws Exception {
    return http.send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(body.toString()))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private static ObjectNode chat(String... userThenAssistantTurns) {
    ObjectNode b = JSON.createObjectNode().put("model", MODEL).put("max_tokens", 6);
    b.put("temperature", 0.0);
    var messages = b.putArray("messages");
    for (int i = 0; i < userThenAssistantTurns.length; i++) {
      messages
          .addObject()
          .put("role", i % 2 == 0 ? "user" : "assistant")
          .put("content", userThenAssistantTurns[i]);
    }
    return b;
  }

  private static ObjectNode thinking(ObjectNode body) {
    body.putObject("logit_bias").put(String.valueOf(THINK), 100);
    return body;
  }

  private JsonNode answer(ObjectNode body) throws Exception {
    HttpResponse<String> r = post(body);
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    return JSON.readTree(r.body());
  }

  @Test
  void thinkingIsAnsweredApartFromTheContentUnlessTheRequestKeepsItIn() throws Exception {
    JsonNode a = answer(thinking(chat("What is 17 * 3?")));
    JsonNode m = a.at("/choices/0/message");
    // Six <think> tokens: the first opens the thought, the other five are its text.
    assertThat(m.get("reasoning_content").asText()).isEqualTo("<think>".repeat(5));
    assertThat(m.get("content").isNull()).isTrue();
    // A thought that never closed: every token is the thinking's.
    assertThat(a.at("/usage/completion_tokens_details/reasoning_tokens").asInt()).isEqualTo(6);

    ObjectNode kept = thinking(chat("What is 17 * 3?")).put("separate_reasoning", false);
    JsonNode keptAnswer = answer(kept);
    JsonNode whole = keptAnswer.at("/choices/0/message");
    assertThat(whole.get("content").asText()).isEqualTo("<think>".repeat(6));
    assertThat(whole.has("reasoning_content")).isFalse();
    assertThat(keptAnswer.at("/usage").has("completion_tokens_details")).isFalse();
  }

  @Test
  void streamedThinkingAddsUpToTheWholeAnswers() throws Exception {
    ObjectNode body = thinking(chat("What is 17 * 3?")).put("stream", true);
    body.putObject("stream_options").put("include_usage", true);
    HttpResponse<String> r = post(body);
    assertThat(r.statusCode()).isEqualTo(200);
    StringBuilder reasoning = new StringBuilder();
    StringBuilder content = new StringBuilder();
    String finish = null;
    int reasoningTokens = -1;
    for (String line : r.body().split("\n")) {
      if (!line.startsWith("data: {")) {
        continue;
      }
      JsonNode event = JSON.readTree(line.substring(6));
      if (event.hasNonNull("usage")) {
        reasoningTokens = event.at("/usage/completion_tokens_details/reasoning_tokens").asInt();
      }
      JsonNode choice = event.at("/choices/0");
      reasoning.append(choice.path("delta").path("reasoning_content").asText(""));
      content.append(choice.path("delta").path("content").asText(""));
      if (choice.hasNonNull("finish_reason")) {
        finish = choice.get("finish_reason").asText();
      }
    }
    assertThat(reasoning.toString()).isEqualTo("<think>".repeat(5));
    assertThat(content.toString()).isEmpty();
    assertThat(finish).isEqualTo("length");
    assertThat(reasoningTokens).isEqualTo(6);
  }

  @Test
  void templateSwitchesAndEarlierReasoningReachTheTemplate() throws Exception {
    int plain = promptTokens(chat("Hi"));
    // enable_thinking false closes an empty thought: <think>, \n\n, </think>, \n\n.
    ObjectNode off = chat("Hi");
    off.putObject("chat_template_kwargs").put("enable_thinking", false);
    assertThat(promptTokens(off)).isEqualTo(plain + 4);

    // The last assistant turn's reasoning is written back into the conversation.
    int without = promptTokens(chat("Hi", "Hello."));
    ObjectNode with = chat("Hi", "Hello.");
    ((ObjectNode) with.at("/messages/1")).put("reasoning_content", "A greeting.");
    assertThat(promptTokens(with)).isGreaterThan(without);

    ObjectNode bad = chat("Hi");
    bad.putArray("chat_template_kwargs");
    HttpResponse<String> refused = post(bad);
    assertThat(refused.statusCode()).isEqualTo(400);
    assertThat(JSON.readTree(refused.body()).at("/error/param").asText())
        .isEqualTo("chat_template_kwargs");
  }

  private int promptTokens(ObjectNode body) throws Exception {
    body.put("max_tokens", 1);
    return answer(body).at("/usage/prompt_tokens").asInt();
  }

  @Test
  void withoutThinkingTheAnswerIsAllContent() throws Exception {
    ObjectNode off = chat("Hi");
    off.putObject("chat_template_kwargs").put("enable_thinking", false);
    off.putObject("logit_bias").put("9707", 100); // "Hello", every step
    JsonNode m = answer(off).at("/choices/0/message");
    assertThat(m.get("content").asText()).isEqualTo("Hello".repeat(6));
    assertThat(m.get("reasoning_content").isNull()).isTrue();
    assertThat(m.get("role").asText()).isEqualTo("assistant");
  }

  /**
   * JSON mode lets a thinking model think first, as vLLM's and SGLang's reasoning parsers do: the
   * object is constrained from the end of the thought. With the thought closed by the template
   * ({@code enable_thinking} false), the object is constrained from the first token, and the bias
   * on {@code <think>} cannot open a thought.
   */
  @Test
  void jsonModeHoldsAfterTheThought() throws Exception {
    ObjectNode json = thinking(chat("Give me JSON"));
    json.putObject("response_format").put("type", "json_object");
    JsonNode m = answer(json).at("/choices/0/message");
    assertThat(m.get("reasoning_content").asText()).isEqualTo("<think>".repeat(5));

    json.putObject("chat_template_kwargs").put("enable_thinking", false);
    JsonNode closed = answer(json).at("/choices/0/message");
    assertThat(closed.get("reasoning_content").isNull()).isTrue();
    // The object opens first (the bias then writes <think> inside its first key).
    assertThat(closed.get("content").asText().strip()).startsWith("{\"<think>");
  }

  /**
   * vLLM's {@code thinking_token_budget}: after two tokens of thought the thought is closed, as the
   * template writes a closed one, and the answer follows (the bias writes {@code <think>} on).
   */
  @Test
  void aThinkingBudgetClosesTheThought() throws Exception {
    ObjectNode capped = thinking(chat("What is 17 * 3?")).put("thinking_token_budget", 2);
    capped.put("max_tokens", 8);
    JsonNode a = answer(capped);
    JsonNode m = a.at("/choices/0/message");
    assertThat(m.get("reasoning_content").asText()).isEqualTo("<think>".repeat(2));
    assertThat(m.get("content").asText()).isEqualTo("<think>".repeat(2));
    // <think>, two tokens of thought, then \n and </think> (the \n\n after it is the answer's).
    assertThat(a.at("/usage/completion_tokens_details/reasoning_tokens").asInt()).isEqualTo(5);

    ObjectNode negative = chat("Hi").put("thinking_token_budget", -1);
    HttpResponse<String> refused = post(negative);
    assertThat(refused.statusCode()).isEqualTo(400);
    assertThat(JSON.readTree(refused.body()).at("/error/param").asText())
        .isEqualTo("thinking_token_budget");
  }

  /**
   * The Responses API: the thought is a reasoning item before the message, whole and streamed (its
   * {@code response.reasoning_text.delta} events add up to it), and its tokens are counted as
   * reasoning tokens.
   */
  @Test
  void aResponseGivesTheThoughtAsAReasoningItem() throws Exception {
    ObjectNode body = JSON.createObjectNode().put("model", MODEL).put("input", "What is 17 * 3?");
    body.put("max_output_tokens", 8).put("temperature", 0.0).put("thinking_token_budget", 2);
    body.putObject("logit_bias").put(String.valueOf(THINK), 100);
    HttpResponse<String> r = post("/v1/responses", body);
    assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    JsonNode whole = JSON.readTree(r.body());
    assertThat(whole.at("/output/0/type").asText()).isEqualTo("reasoning");
    assertThat(whole.at("/output/0/content/0/text").asText()).isEqualTo("<think>".repeat(2));
    assertThat(whole.at("/output/1/type").asText()).isEqualTo("message");
    assertThat(whole.at("/output/1/content/0/text").asText()).isEqualTo("<think>".repeat(2));
    assertThat(whole.at("/usage/output_tokens_details/reasoning_tokens").asInt()).isEqualTo(5);
    assertThat(whole.at("/status").asText()).isEqualTo("incomplete");

    HttpResponse<String> streamed = post("/v1/responses", body.put("stream", true));
    StringBuilder reasoning = new StringBuilder();
    StringBuilder text = new StringBuilder();
    JsonNode last = null;
    for (String line : streamed.body().split("\n")) {
      if (!line.startsWith("data: {")) {
        continue;
      }
      JsonNode event = JSON.readTree(line.substring(6));
      switch (event.path("type").asText()) {
        case "response.reasoning_text.delta" -> reasoning.append(event.get("delta").asText());
        case "response.output_text.delta" -> text.append(event.get("delta").asText());
        case "response.incomplete", "response.completed" -> last = event.get("response");
        default -> {}
      }
    }
    assertThat(reasoning.toString()).isEqualTo("<think>".repeat(2));
    assertThat(text.toString()).isEqualTo("<think>".repeat(2));
    assertThat(withoutIds(last.get("output"))).isEqualTo(withoutIds(whole.get("output")));
    assertThat(last.get("usage")).isEqualTo(whole.get("usage"));
  }

  /** Output items without their ids, which name each request apart. */
  private static JsonNode withoutIds(JsonNode output) {
    JsonNode copy = output.deepCopy();
    copy.forEach(item -> ((ObjectNode) item).remove("id"));
    return copy;
  }
}
