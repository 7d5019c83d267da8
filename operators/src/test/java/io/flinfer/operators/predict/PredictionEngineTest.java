package io.flinfer.operators.predict;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinfer.avro.ChatMessage;
import io.flinfer.avro.PromptRequest;
import io.flinfer.avro.SamplingOptions;
import io.flinfer.operators.engine.EngineConfig;
import io.flinfer.operators.flink.ModelSource;
import io.flinfer.operators.request.RequestLimits;
import io.flinfer.runtime.chat.ReasoningParser;
import io.flinfer.runtime.chat.ToolCall;
import io.flinfer.runtime.chat.ToolCallFormat;
import io.flinfer.runtime.testing.SharedFiles;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class PredictionEngineTest {
  private static PredictionEngine.Key key(int maxRunning) {
    Path dir = SharedFiles.stories260kDir();
    return new PredictionEngine.Key(
        new ModelSource(
            dir.resolve("stories260K.bin").toString(), dir.resolve("tok512.bin").toString()),
        EngineConfig.builder()
            .maxRunningRequests(maxRunning)
            .maxTotalTokens(4096)
            .threads(1)
            .build(),
        "cpu",
        RequestLimits.defaults());
  }

  private static PromptRequest prompt(String text) {
    return PromptRequest.newBuilder()
        .setRequestId("ignored")
        .setPrompt(text)
        .setMaxNewTokens(20)
        .setSampling(SamplingOptions.newBuilder().setTemperature(0f).build())
        .build();
  }

  @Test
  void anEngineThatCannotLoadAnswersEveryPromptWithTheReason() throws Exception {
    PredictionEngine.Key missing =
        new PredictionEngine.Key(
            new ModelSource("/no/such/model.gguf", null),
            EngineConfig.builder().threads(1).build(),
            "cpu",
            RequestLimits.defaults());
    PredictionEngine e = PredictionEngine.acquire(missing);
    try {
      Prediction first = e.submit(prompt("Once")).get(30, TimeUnit.SECONDS);
      assertThat(first.finishReason()).isEqualTo("error");
      assertThat(first.error()).contains("did not load");
      // Later prompts too, although nothing serves the queue any more.
      assertThat(e.submit(prompt("Twice")).get(30, TimeUnit.SECONDS).error())
          .contains("did not load");
    } finally {
      e.release();
    }
  }

  @Test
  void callersShareOneEngineAndBatchedAnswersEqualSoloOnes() throws Exception {
    String[] prompts = {"Once upon a time", "Lily and Ben", "The sun was hot", "Tom had a ball"};
    List<String> solo = new ArrayList<>();
    PredictionEngine one = PredictionEngine.acquire(key(1));
    try {
      for (String p : prompts) {
        solo.add(one.submit(prompt(p)).get().text());
      }
    } finally {
      one.release();
    }
    PredictionEngine a = PredictionEngine.acquire(key(8));
    PredictionEngine b = PredictionEngine.acquire(key(8));
    try {
      assertThat(a).isSameAs(b);
      List<CompletableFuture<Prediction>> batched = new ArrayList<>();
      for (int i = 0; i < prompts.length; i++) {
        batched.add((i % 2 == 0 ? a : b).submit(prompt(prompts[i])));
      }
      for (int i = 0; i < prompts.length; i++) {
        Prediction p = batched.get(i).get();
        assertThat(p.error()).isNull();
        assertThat(p.text()).isEqualTo(solo.get(i));
        assertThat(p.completionTokens()).isBetween(1, 20);
        assertThat(p.finishReason()).isIn("length", "stop");
      }
      // A prompt the model cannot take is an answer with its reason, not a failure.
      Prediction bad = a.submit(PromptRequest.newBuilder().setRequestId("x").build()).get();
      assertThat(bad.finishReason()).isEqualTo("error");
      assertThat(bad.error()).isNotBlank();
    } finally {
      a.release();
      b.release();
    }
  }

  /**
   * A conversation with a thinking model (the zoo's Qwen3): its thinking apart from its answer, and
   * the template's switches in its prompt. A logit bias on {@code <think>} makes the random-weight
   * model open a thought and write {@code <think>} on.
   */
  @Test
  void aThinkingModelsConversationGetsItsThinkingApart() throws Exception {
    PromptRequest chat = greedyHi();
    PredictionEngine e = PredictionEngine.acquire(qwen3());
    try {
      PromptRequest thinking =
          PromptRequest.newBuilder(chat).setLogitBias(Map.of("151667", 100f)).build();
      Prediction p = e.submit(thinking).get();
      assertThat(p.text()).isEqualTo("<think>".repeat(4));
      assertThat(p.reasoningContent()).isEqualTo("<think>".repeat(3));
      assertThat(p.content()).isEmpty();

      Prediction plain = e.submit(chat).get();
      PromptRequest off =
          PromptRequest.newBuilder(chat)
              .setChatTemplateKwargs("{\"enable_thinking\": false}")
              .build();
      Prediction closed = e.submit(off).get();
      // <think>, \n\n, </think>, \n\n
      assertThat(closed.promptTokens()).isEqualTo(plain.promptTokens() + 4);
      assertThat(closed.reasoningContent()).isNull();
      assertThat(closed.content()).isEqualTo(closed.text());

      // A budget of two tokens: the thought is closed after them, and the answer goes on.
      PromptRequest capped =
          PromptRequest.newBuilder(thinking).setMaxNewTokens(8).setThinkingTokenBudget(2).build();
      Prediction c = e.submit(capped).get();
      assertThat(c.text()).isEqualTo("<think>".repeat(3) + "\n</think>\n\n" + "<think>".repeat(2));
      assertThat(c.reasoningContent()).isEqualTo("<think>".repeat(2));
      assertThat(c.content()).isEqualTo("<think>".repeat(2));
      // Before a JSON object too: the closing tokens keep to the shape, which then holds.
      Prediction json =
          e.submit(
                  PromptRequest.newBuilder(capped)
                      .setResponseFormat("json_object")
                      .setThinkingTokenBudget(1)
                      .build())
              .get();
      assertThat(json.text()).startsWith("<think><think>\n</think>\n\n");
      assertThat(json.reasoningContent()).isEqualTo("<think>");
      assertThat(json.content()).startsWith("{");
    } finally {
      e.release();
    }
  }

  /**
   * A conversation with tools: the template gets them, and the calls the answer makes (after any
   * thinking) come apart, with ids derived from what was asked; cut short by the token limit, as
   * far as they got.
   */
  @Test
  void aConversationWithToolsGetsTheCallsItsAnswerMakes() throws Exception {
    String text =
        "<think>\nMaybe <tool_call>\n{\"name\": \"no\", \"arguments\": {}}\n</tool_call>\n"
            + "</think>\n\nSure.\n<tool_call>\n{\"name\": \"add\", \"arguments\": {\"a\": 1}}\n"
            + "</tool_call>";
    Prediction p =
        Prediction.of(
            text, "stop", 5, 20, ReasoningParser.of(false), ToolCallFormat.HERMES, "q", null);
    assertThat(p.toolCalls())
        .containsExactly(new ToolCall(ToolCall.idFor("q", 0), "add", "{\"a\": 1}"));
    assertThat(p.content()).startsWith("Sure.\n<tool_call>");
    Prediction cut =
        Prediction.of(
            text.substring(0, text.length() - 18),
            "length",
            5,
            18,
            ReasoningParser.of(false),
            ToolCallFormat.HERMES,
            "q",
            null);
    assertThat(cut.toolCalls())
        .containsExactly(new ToolCall(ToolCall.idFor("q", 0), "add", "{\"a\""));
    assertThat(Prediction.of(text, "stop", 5, 20, null, null, "q", null).toolCalls()).isEmpty();

    PromptRequest chat = greedyHi();
    PredictionEngine e = PredictionEngine.acquire(qwen3());
    try {
      Prediction plain = e.submit(chat).get();
      Prediction offered =
          e.submit(
                  PromptRequest.newBuilder(chat)
                      .setTools(
                          "[{\"type\": \"function\", \"function\": {\"name\": \"add\","
                              + " \"parameters\": {\"type\": \"object\"}}}]")
                      .build())
              .get();
      assertThat(offered.error()).isNull();
      assertThat(offered.promptTokens()).isGreaterThan(plain.promptTokens() + 20);
      assertThat(offered.toolCalls()).isEmpty(); // the random model's answer is content
    } finally {
      e.release();
    }
  }

  /** "Hi" from the user, four tokens answered greedily. */
  private static PromptRequest greedyHi() {
    return PromptRequest.newBuilder()
        .setRequestId("ignored")
        .setMessages(List.of(ChatMessage.newBuilder().setRole("user").setContent("Hi").build()))
        .setMaxNewTokens(4)
        .setSampling(SamplingOptions.newBuilder().setTemperature(0f).build())
        .build();
  }

  private static PredictionEngine.Key qwen3() {
    return new PredictionEngine.Key(
        new ModelSource(SharedFiles.root().resolve("models/zoo/qwen3-tiny.gguf").toString(), null),
        EngineConfig.builder().maxTotalTokens(1024).threads(1).build(),
        "cpu",
        RequestLimits.defaults());
  }
}
