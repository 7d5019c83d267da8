package io.flinfer.operators.flink;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinfer.avro.ChatMessage;
import io.flinfer.avro.Completion;
import io.flinfer.avro.CompletionChunk;
import io.flinfer.avro.PromptRequest;
import io.flinfer.runtime.chat.ToolCall;
import io.flinfer.runtime.testing.SharedFiles;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.api.operators.KeyedProcessOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.junit.jupiter.api.Test;

/**
 * The detokenizer in Flink's operator test harness: a token whose text is held (part of a UTF-8
 * character) travels with the chunk that completes it, with its log-probability and its
 * alternatives, whether tokens arrive one by one or several together, so the chunks carry every
 * generated token once, in order, and their text is the completion's.
 */
class DetokenizerTest {
  /** stories260K's byte tokens: {@code <0x00>} is id 3. */
  private static int byteToken(int b) {
    return 3 + b;
  }

  /** A right quote split in three bytes, a word, then a lone lead byte that never completes. */
  private static int[] tokens() {
    int word = SharedFiles.stories260k().tokenizer().encode("cat", false)[0];
    return new int[] {byteToken(0xE2), byteToken(0x80), byteToken(0x99), word, byteToken(0xE2)};
  }

  /** The tokens in outputs of the given sizes, the last one finishing: chunks, then completion. */
  private static Result detokenize(int[] tokens, int... sizes) throws Exception {
    var dir = SharedFiles.stories260kDir();
    ModelSource source =
        new ModelSource(
            dir.resolve("stories260K.bin").toString(), dir.resolve("tok512.bin").toString());
    TokenizedPrompt prompt = new TokenizedPrompt();
    prompt.request =
        PromptRequest.newBuilder().setRequestId("r").setPrompt("Once").setStream(true).build();
    prompt.promptIds = new int[] {1, 403};
    prompt.routingKey = "k";
    try (var h =
        new KeyedOneInputStreamOperatorTestHarness<String, TokenOutput, Completion>(
            new KeyedProcessOperator<>(new Detokenizer(source, "test")),
            t -> t.requestId,
            Types.STRING)) {
      h.open();
      int next = 0;
      for (int k = 0; k < sizes.length; k++) {
        TokenOutput t = new TokenOutput();
        t.requestId = "r";
        t.index = next;
        t.tokenIds = Arrays.copyOfRange(tokens, next, next + sizes[k]);
        t.logprobs = new float[sizes[k]];
        // Two alternatives a token: itself, then a token 100 ids on, one nat less likely.
        t.topIds = new int[2 * sizes[k]];
        t.topLogprobs = new float[2 * sizes[k]];
        for (int i = 0; i < sizes[k]; i++) {
          t.logprobs[i] = -(next + i);
          t.topIds[2 * i] = t.tokenIds[i];
          t.topIds[2 * i + 1] = t.tokenIds[i] + 100;
          t.topLogprobs[2 * i] = t.logprobs[i];
          t.topLogprobs[2 * i + 1] = t.logprobs[i] - 1;
        }
        t.prompt = k == 0 ? prompt : null;
        if (k == sizes.length - 1) {
          t.finishType = "length";
        }
        h.processElement(t, 0);
        next += sizes[k];
      }
      List<CompletionChunk> chunks = new ArrayList<>();
      for (StreamRecord<CompletionChunk> r : h.getSideOutput(Detokenizer.CHUNKS)) {
        chunks.add(r.getValue());
      }
      return new Result(chunks, h.extractOutputValues().get(0));
    }
  }

  private record Result(List<CompletionChunk> chunks, Completion done) {
    /** The chunks carry every token once, in order, and their text is the completion's. */
    void assertCompleteAndConsistent(int[] tokens) {
      List<Integer> streamed = new ArrayList<>();
      StringBuilder text = new StringBuilder();
      for (CompletionChunk c : chunks) {
        assertThat(c.getIndex()).isEqualTo(streamed.size());
        assertThat(c.getLogprobs()).hasSameSizeAs(c.getTokenIds());
        // Each token's alternatives travel with it, however long its text was held.
        assertThat(c.getTopLogprobs()).hasSameSizeAs(c.getTokenIds());
        for (int i = 0; i < c.getTokenIds().size(); i++) {
          int token = c.getTokenIds().get(i);
          assertThat(c.getTopLogprobs().get(i).getTokenIds()).containsExactly(token, token + 100);
          float lp = c.getLogprobs().get(i);
          assertThat(c.getTopLogprobs().get(i).getLogprobs()).containsExactly(lp, lp - 1);
        }
        streamed.addAll(c.getTokenIds());
        text.append(c.getTextDelta());
      }
      assertThat(streamed).containsExactlyElementsOf(Arrays.stream(tokens).boxed().toList());
      assertThat(text.toString()).isEqualTo(done.getText()).endsWith("\uFFFD");
      assertThat(done.getUsage().getCompletionTokens()).isEqualTo(tokens.length);
    }
  }

  @Test
  void heldTokensTravelWithTheChunkThatCompletesTheirText() throws Exception {
    int[] tokens = tokens();
    Result r = detokenize(tokens, 1, 1, 1, 1, 1);
    List<CompletionChunk> chunks = r.chunks();
    assertThat(chunks).extracting(CompletionChunk::getIndex).containsExactly(0, 3, 4);
    assertThat(chunks.get(0).getTokenIds())
        .containsExactly(byteToken(0xE2), byteToken(0x80), byteToken(0x99));
    assertThat(chunks.get(0).getLogprobs()).containsExactly(0f, -1f, -2f);
    assertThat(chunks.get(0).getTextDelta()).isEqualTo("\u2019");
    r.assertCompleteAndConsistent(tokens);
  }

  @Test
  void tokensArrivingTogetherMakeOneChunkAndAHeldTokenStaysHeld() throws Exception {
    int[] tokens = tokens();
    // The first two bytes of the quote complete nothing; the rest arrive with the end.
    Result r = detokenize(tokens, 2, 3);
    List<CompletionChunk> chunks = r.chunks();
    assertThat(chunks).extracting(CompletionChunk::getIndex).containsExactly(0, 4);
    assertThat(chunks.get(0).getTokenIds()).hasSize(4);
    assertThat(chunks.get(0).getTextDelta()).startsWith("\u2019");
    assertThat(chunks.get(1).getTokenIds()).containsExactly(byteToken(0xE2));
    assertThat(chunks.get(1).getTextDelta()).isEqualTo("\uFFFD");
    r.assertCompleteAndConsistent(tokens);
  }

  /** The completion of {@code text}, as qwen3-tiny's tokens, for {@code request}. */
  private static Completion qwenCompletion(PromptRequest request, String text) throws Exception {
    return qwenCompletion(request, text, "stop");
  }

  /** The completion of {@code text} that ended with {@code finish}. */
  private static Completion qwenCompletion(PromptRequest request, String text, String finish)
      throws Exception {
    ModelSource source =
        new ModelSource(SharedFiles.root().resolve("models/zoo/qwen3-tiny.gguf").toString(), null);
    TokenizedPrompt prompt = new TokenizedPrompt();
    prompt.request = request;
    prompt.promptIds = new int[] {9707};
    prompt.routingKey = "k";
    try (var h =
        new KeyedOneInputStreamOperatorTestHarness<String, TokenOutput, Completion>(
            new KeyedProcessOperator<>(new Detokenizer(source, "qwen")),
            t -> t.requestId,
            Types.STRING)) {
      h.open();
      TokenOutput t = new TokenOutput();
      t.requestId = request.getRequestId();
      t.index = 0;
      t.tokenIds = source.load().tokenizer().encode(text, false, true);
      t.logprobs = new float[t.tokenIds.length];
      t.topIds = new int[0];
      t.topLogprobs = new float[0];
      t.prompt = prompt;
      t.finishType = finish;
      h.processElement(t, 0);
      return h.extractOutputValues().get(0);
    }
  }

  /**
   * A request with tools: its completion carries the calls its text makes, in the family's own
   * form, with ids derived from the request id; the text keeps them. Without tools, none.
   */
  @Test
  void aRequestWithToolsGetsTheCallsItsTextMakes() throws Exception {
    String text =
        "Let me add.\n<tool_call>\n{\"name\": \"add\", \"arguments\": {\"a\": 1}}\n</tool_call>";
    PromptRequest withTools =
        PromptRequest.newBuilder().setRequestId("t1").setPrompt("x").setTools("[]").build();
    Completion c = qwenCompletion(withTools, text);
    assertThat(c.getText()).isEqualTo(text);
    assertThat(c.getToolCalls())
        .singleElement()
        .satisfies(
            call -> {
              assertThat(call.getId()).isEqualTo(ToolCall.idFor("t1", 0));
              assertThat(call.getName()).isEqualTo("add");
              assertThat(call.getArguments()).isEqualTo("{\"a\": 1}");
            });
    // Cut short by the token limit: the call as far as it got, as the gateway streams it.
    Completion cut = qwenCompletion(withTools, text.substring(0, text.length() - 18), "length");
    assertThat(cut.getFinishReason()).isEqualTo("length");
    assertThat(cut.getToolCalls())
        .singleElement()
        .satisfies(call -> assertThat(call.getArguments()).isEqualTo("{\"a\""));
    PromptRequest plain = PromptRequest.newBuilder(withTools).setTools(null).build();
    assertThat(qwenCompletion(plain, text).getToolCalls()).isEmpty();
  }

  /**
   * A conversation with a thinking model: the completion carries the thinking apart, the text keeps
   * it as written, and calls are read from the answer after it only. A prompt, or a thought the
   * template closed, leaves the text all answer.
   */
  @Test
  void aConversationGetsItsThinkingApartAndCallsFromItsAnswer() throws Exception {
    String text =
        "<think>\nMaybe <tool_call>\n{\"name\": \"no\", \"arguments\": {}}\n</tool_call>?\n"
            + "</think>\n\nAdding.\n<tool_call>\n{\"name\": \"add\", \"arguments\": {}}\n</tool_call>";
    ChatMessage user = ChatMessage.newBuilder().setRole("user").setContent("Add").build();
    PromptRequest chat =
        PromptRequest.newBuilder()
            .setRequestId("r1")
            .setMessages(List.of(user))
            .setTools("[]")
            .build();
    Completion c = qwenCompletion(chat, text);
    assertThat(c.getText()).isEqualTo(text);
    assertThat(c.getReasoningContent())
        .isEqualTo("Maybe <tool_call>\n{\"name\": \"no\", \"arguments\": {}}\n</tool_call>?");
    assertThat(c.getToolCalls()).extracting(t -> t.getName()).containsExactly("add");
    // The thinking's tokens: up to </think> (one token in Qwen3's vocabulary), of all of them.
    int[] ids =
        new ModelSource(SharedFiles.root().resolve("models/zoo/qwen3-tiny.gguf").toString(), null)
            .load()
            .tokenizer()
            .encode(text, false, true);
    int close = 0;
    while (ids[close] != 151668) {
      close++;
    }
    assertThat(c.getUsage().getReasoningTokens()).isEqualTo(close + 1).isLessThan(ids.length);
    assertThat(qwenCompletion(chat, "Adding.").getUsage().getReasoningTokens()).isZero();

    assertThat(qwenCompletion(chat, "Adding.").getReasoningContent()).isNull();
    PromptRequest prompted =
        PromptRequest.newBuilder(chat).setMessages(null).setTools(null).setPrompt("x").build();
    assertThat(qwenCompletion(prompted, text).getReasoningContent()).isNull();
  }

  /**
   * A streamed conversation with a thinking model, one token an output: its chunks carry the text
   * as written, and apart what each adds to the thinking and to the answer, adding up to the
   * completion's; a detokenizer restored from a snapshot at any token goes on splitting alike.
   */
  @Test
  void streamedThinkingIsSplitInTheChunksAcrossARestore() throws Exception {
    String text = "<think>\nFirst a, then b.\n</think>\n\nThe answer: 42.";
    ChatMessage user = ChatMessage.newBuilder().setRole("user").setContent("Why?").build();
    PromptRequest chat =
        PromptRequest.newBuilder()
            .setRequestId("r2")
            .setMessages(List.of(user))
            .setStream(true)
            .build();
    ModelSource source =
        new ModelSource(SharedFiles.root().resolve("models/zoo/qwen3-tiny.gguf").toString(), null);
    int[] ids = source.load().tokenizer().encode(text, false, true);
    Result whole = streamQwen(source, chat, ids, -1);
    StringBuilder reasoning = new StringBuilder();
    StringBuilder content = new StringBuilder();
    StringBuilder written = new StringBuilder();
    for (CompletionChunk c : whole.chunks()) {
      reasoning.append(c.getReasoningDelta());
      content.append(c.getContentDelta());
      written.append(c.getTextDelta());
    }
    assertThat(written.toString()).isEqualTo(text).isEqualTo(whole.done().getText());
    assertThat(reasoning.toString())
        .isEqualTo(whole.done().getReasoningContent())
        .isEqualTo("First a, then b.");
    assertThat(content.toString()).isEqualTo("The answer: 42.");
    // The thinking went out as it came, not at the end.
    assertThat(whole.chunks().stream().filter(c -> !c.getReasoningDelta().isEmpty()).count())
        .isGreaterThan(1);
    for (int at = 1; at < ids.length; at++) {
      Result restored = streamQwen(source, chat, ids, at);
      // A chunk repeated after the restore is the same chunk; consumers drop repeats by index.
      Map<Integer, CompletionChunk> byIndex = new TreeMap<>();
      for (CompletionChunk c : restored.chunks()) {
        CompletionChunk before = byIndex.putIfAbsent(c.getIndex(), c);
        assertThat(before == null || before.equals(c)).isTrue();
      }
      assertThat(List.copyOf(byIndex.values()))
          .as("restored at token %d", at)
          .isEqualTo(whole.chunks());
    }
    // A prompt's output is not split.
    PromptRequest prompted =
        PromptRequest.newBuilder(chat).setMessages(null).setPrompt("x").build();
    assertThat(streamQwen(source, prompted, ids, -1).chunks())
        .allSatisfy(
            c -> {
              assertThat(c.getReasoningDelta()).isNull();
              assertThat(c.getContentDelta()).isNull();
            });
  }

  /**
   * qwen3-tiny's {@code ids} for {@code request}, one token an output, the last finishing; with
   * {@code restoreAt} at least 0, the detokenizer is snapshotted before that token and a new one
   * restored from the snapshot goes on, the token before it delivered again (as after a failover).
   */
  private static Result streamQwen(
      ModelSource source, PromptRequest request, int[] ids, int restoreAt) throws Exception {
    TokenizedPrompt prompt = new TokenizedPrompt();
    prompt.request = request;
    prompt.promptIds = new int[] {9707};
    prompt.routingKey = "k";
    List<CompletionChunk> chunks = new ArrayList<>();
    var h = qwenHarness(source);
    h.open();
    int k = 0;
    while (k < ids.length) {
      if (k == restoreAt) {
        OperatorSubtaskState snapshot = h.snapshot(0, 0);
        collect(h, chunks);
        h.close();
        h = qwenHarness(source);
        h.initializeState(snapshot);
        h.open();
        restoreAt = -1;
        k = Math.max(0, k - 1);
      }
      TokenOutput t = new TokenOutput();
      t.requestId = request.getRequestId();
      t.index = k;
      t.tokenIds = new int[] {ids[k]};
      t.logprobs = new float[1];
      t.topIds = new int[0];
      t.topLogprobs = new float[0];
      t.prompt = k == 0 ? prompt : null;
      t.finishType = k == ids.length - 1 ? "stop" : null;
      h.processElement(t, 0);
      k++;
    }
    collect(h, chunks);
    Completion done = h.extractOutputValues().get(0);
    h.close();
    return new Result(chunks, done);
  }

  private static KeyedOneInputStreamOperatorTestHarness<String, TokenOutput, Completion>
      qwenHarness(ModelSource source) throws Exception {
    return new KeyedOneInputStreamOperatorTestHarness<>(
        new KeyedProcessOperator<>(new Detokenizer(source, "qwen")),
        t -> t.requestId,
        Types.STRING);
  }

  private static void collect(
      KeyedOneInputStreamOperatorTestHarness<String, TokenOutput, Completion> h,
      List<CompletionChunk> into) {
    var side = h.getSideOutput(Detokenizer.CHUNKS);
    if (side != null) {
      for (StreamRecord<CompletionChunk> r : side) {
        into.add(r.getValue());
      }
    }
  }
}
