package io.flinfer.operators.flink;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinfer.avro.PromptRequest;
import io.flinfer.avro.SamplingOptions;
import io.flinfer.operators.engine.EngineConfig;
import io.flinfer.operators.engine.SpeculativeConfig;
import io.flinfer.operators.request.RequestLimits;
import io.flinfer.operators.request.RequestValidator;
import io.flinfer.operators.request.ValidatedRequest;
import io.flinfer.runtime.model.LlamaModel;
import io.flinfer.runtime.testing.SharedFiles;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.runtime.tasks.mailbox.Mail;
import org.apache.flink.streaming.runtime.tasks.mailbox.TaskMailbox;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The inference operator alone in Flink's operator test harness: its in-flight requests are keyed
 * state in every snapshot, and an operator restored from a snapshot completes them with exactly the
 * tokens an uninterrupted operator emits, each token once.
 */
class InferenceOperatorTest {
  private static final String[] PROMPTS = {
    "Once upon a time", "The little dog", "Lily and Ben went to the park", "One day"
  };

  private static LlamaModel model;
  private static InferenceSettings settings;

  @BeforeAll
  static void load() {
    model = SharedFiles.stories260k();
    ModelSource source =
        new ModelSource(
            SharedFiles.stories260kDir().resolve("stories260K.bin").toString(),
            SharedFiles.stories260kDir().resolve("tok512.bin").toString());
    settings = new InferenceSettings(source, 8, 2048, 64, 1, "cpu", 0);
  }

  @Test
  void restoredInFlightRequestsCompleteAsIfNeverInterrupted() throws Exception {
    List<TokenizedPrompt> prompts = prompts();
    Map<String, List<Integer>> uninterrupted = uninterrupted(settings, prompts);

    OperatorSubtaskState snapshot;
    try (var h = harness()) {
      h.open();
      for (TokenizedPrompt p : prompts) {
        h.processElement(p, 0);
      }
      // The requests are queued; the first step waits for the admission window.
      snapshot = h.snapshot(1, 0);
      assertThat(h.extractOutputValues()).isEmpty();
    }

    try (var h = harness()) {
      h.initializeState(snapshot);
      h.open();
      // A replayed source record of a request already restored is not served twice.
      h.processElement(prompts.get(0), 0);
      serve(h, 1_000);
      List<TokenOutput> out = h.extractOutputValues();
      assertThat(tokensByRequest(out)).isEqualTo(uninterrupted);
      assertThat(out.stream().filter(o -> o.finishType != null)).hasSize(prompts.size());
      // Once finished, nothing is left in the state of the next snapshot.
      OperatorSubtaskState after = h.snapshot(2, 1_000);
      try (var again = harness()) {
        again.initializeState(after);
        again.open();
        serve(again, 2_000);
        assertThat(again.extractOutputValues()).isEmpty();
      }
    }
  }

  @ParameterizedTest(name = "stream interval {0} ms")
  @ValueSource(longs = {0, 60_000})
  void aSnapshotMidGenerationRestoresEachRequestWhereItStood(long streamInterval) throws Exception {
    // A pool of 256 tokens, two running requests and prompts of 100: three prompts waiting fill
    // the pool's worth of demand, so the sixth record is only taken after steps run inline, until
    // the first request (8 tokens) finishes and the third starts; the second is then mid-way. With
    // a long stream interval (and the harness's clock standing still), its tokens after the first
    // are held until the barrier.
    InferenceSettings small =
        new InferenceSettings(settings.model(), 2, 256, 128, 1, "cpu", streamInterval);
    List<TokenizedPrompt> prompts = longPrompts(6);
    Map<String, List<Integer>> uninterrupted = uninterrupted(small, prompts);

    OperatorSubtaskState snapshot;
    List<TokenOutput> beforeSnapshot;
    try (var h = harness(small)) {
      h.open();
      for (TokenizedPrompt p : prompts) {
        h.processElement(p, 0);
      }
      List<TokenOutput> early = new ArrayList<>(h.extractOutputValues());
      h.prepareSnapshotPreBarrier(1);
      snapshot = h.snapshot(1, 0);
      beforeSnapshot = new ArrayList<>(h.extractOutputValues());
      if (streamInterval > 0) {
        // Before the barrier: first tokens, and the finished request's end with its held tokens.
        assertThat(early)
            .allSatisfy(o -> assertThat(o.index == 0 || o.finishType != null).isTrue());
        assertThat(early).anySatisfy(o -> assertThat(o.tokenIds).hasSize(7));
        // At the barrier: the second request's held tokens, together.
        List<TokenOutput> atBarrier = beforeSnapshot.subList(early.size(), beforeSnapshot.size());
        assertThat(atBarrier)
            .singleElement()
            .satisfies(
                o -> {
                  assertThat(o.requestId).isEqualTo("long1");
                  assertThat(o.index).isEqualTo(1);
                  assertThat(o.tokenIds.length).isGreaterThan(1);
                  assertThat(o.finishType).isNull();
                });
      }
    }
    Map<String, List<Integer>> partial = tokensByRequest(beforeSnapshot);
    assertThat(partial.get("long1"))
        .as("a request mid-generation at the snapshot")
        .isNotEmpty()
        .hasSizeLessThan(24);

    assertThat(tokensByRequest(restored(small, snapshot, beforeSnapshot))).isEqualTo(uninterrupted);
  }

  /**
   * Under speculative decoding a step gives a request several tokens; a snapshot between steps
   * restores each request where it stood, and the outputs are those of an operator without drafts.
   */
  @Test
  void aSnapshotMidSpeculativeDecodingRestoresEachRequestWhereItStood() throws Exception {
    EngineConfig.Builder engine =
        EngineConfig.builder()
            .maxRunningRequests(4)
            .maxTotalTokens(1024)
            .chunkedPrefillSize(128)
            .threads(1);
    InferenceSettings plain = new InferenceSettings(settings.model(), engine.build(), "cpu", 0);
    InferenceSettings drafting =
        new InferenceSettings(
            settings.model(), engine.speculative(SpeculativeConfig.ngram(6)).build(), "cpu", 0);
    String tom = "Tom has a red ball. Tom likes the red ball. ";
    List<TokenizedPrompt> prompts = prompts(tom + tom, 60);
    Map<String, List<Integer>> uninterrupted = uninterrupted(plain, prompts);

    OperatorSubtaskState snapshot;
    List<TokenOutput> beforeSnapshot;
    InferenceOperator first = new InferenceOperator(drafting);
    try (var h = harness(first)) {
      h.open();
      for (TokenizedPrompt p : prompts) {
        h.processElement(p, 0);
      }
      h.setProcessingTime(1_000);
      TaskMailbox mails = h.getTaskMailbox();
      for (int i = 0; i < 12; i++) {
        mails.tryTake(TaskMailbox.MIN_PRIORITY).orElseThrow().run();
      }
      assertThat(first.engineStats().acceptedDraftTokens()).as("drafts held").isPositive();
      h.prepareSnapshotPreBarrier(1);
      snapshot = h.snapshot(1, 1_000);
      beforeSnapshot = new ArrayList<>(h.extractOutputValues());
    }
    assertThat(tokensByRequest(beforeSnapshot).values())
        .as("requests mid-generation at the snapshot")
        .anySatisfy(t -> assertThat(t).isNotEmpty().hasSizeLessThan(60));

    assertThat(tokensByRequest(restored(drafting, snapshot, beforeSnapshot)))
        .isEqualTo(uninterrupted);
  }

  /**
   * Prompt log-probabilities leave with a request's first token, once: a request restored after its
   * first token does not send them again, one restored before it sends them after, and they are
   * what an uninterrupted operator sends.
   */
  @Test
  void promptLogprobsLeaveOnceWithTheFirstTokenAcrossARestore() throws Exception {
    InferenceSettings small = new InferenceSettings(settings.model(), 2, 256, 128, 1, "cpu", 0);
    List<TokenizedPrompt> prompts = new ArrayList<>();
    for (TokenizedPrompt p : longPrompts(6)) {
      PromptRequest r =
          PromptRequest.newBuilder(p.request).setStream(true).setPromptLogprobs(2).build();
      prompts.add(tokenized(r, prompts.size()));
    }
    Map<String, float[]> expected;
    try (var h = harness(small)) {
      h.open();
      for (TokenizedPrompt p : prompts) {
        h.processElement(p, 0);
      }
      serve(h, 1_000);
      expected = promptLogprobs(h.extractOutputValues());
    }
    assertThat(expected).hasSize(prompts.size());
    assertThat(expected.values()).allSatisfy(lp -> assertThat(lp).hasSize(99));

    List<TokenOutput> beforeSnapshot;
    OperatorSubtaskState snapshot;
    try (var h = harness(small)) {
      h.open();
      for (TokenizedPrompt p : prompts) {
        h.processElement(p, 0);
      }
      h.prepareSnapshotPreBarrier(1);
      snapshot = h.snapshot(1, 0);
      beforeSnapshot = new ArrayList<>(h.extractOutputValues());
    }
    Map<String, float[]> before = promptLogprobs(beforeSnapshot);
    assertThat(before).as("some requests had their first token").isNotEmpty();
    assertThat(before).hasSizeLessThan(prompts.size());
    Map<String, float[]> got = promptLogprobs(restored(small, snapshot, beforeSnapshot));
    assertThat(got.keySet()).isEqualTo(expected.keySet());
    expected.forEach((id, lp) -> assertThat(got.get(id)).as(id).isEqualTo(lp));
  }

  /** Each request's prompt log-probabilities; fails where a request sent them twice. */
  private static Map<String, float[]> promptLogprobs(List<TokenOutput> out) {
    Map<String, float[]> byId = new TreeMap<>();
    for (TokenOutput o : out) {
      if (o.promptLogprobs.length > 0) {
        assertThat(o.index).isZero();
        assertThat(o.promptRanks).hasSameSizeAs(o.promptLogprobs);
        assertThat(o.promptTopIds).hasSize(2 * o.promptLogprobs.length);
        assertThat(byId.put(o.requestId, o.promptLogprobs)).as(o.requestId).isNull();
      }
    }
    return byId;
  }

  @Test
  void theEndOfABoundedInputServesEveryRequestInFlightToItsEnd() throws Exception {
    List<TokenizedPrompt> prompts = prompts();
    Map<String, List<Integer>> uninterrupted = uninterrupted(settings, prompts);
    try (var h = harness()) {
      h.open();
      for (TokenizedPrompt p : prompts) {
        h.processElement(p, 0);
      }
      // No timer fires and no mail runs: a finishing task quiesces its timers before finish().
      h.endInput();
      List<TokenOutput> out = h.extractOutputValues();
      assertThat(tokensByRequest(out)).isEqualTo(uninterrupted);
      assertThat(out.stream().filter(o -> o.finishType != null)).hasSize(prompts.size());
    }
  }

  /** Each request's tokens from an operator that serves all the prompts without interruption. */
  private static Map<String, List<Integer>> uninterrupted(
      InferenceSettings s, List<TokenizedPrompt> prompts) throws Exception {
    try (var h = harness(s)) {
      h.open();
      for (TokenizedPrompt p : prompts) {
        h.processElement(p, 0);
      }
      serve(h, 1_000);
      Map<String, List<Integer>> tokens = tokensByRequest(h.extractOutputValues());
      assertThat(tokens).hasSize(prompts.size());
      return tokens;
    }
  }

  /**
   * The outputs {@code before} a snapshot, then those of an operator restored from it and served to
   * the end.
   */
  private static List<TokenOutput> restored(
      InferenceSettings s, OperatorSubtaskState snapshot, List<TokenOutput> before)
      throws Exception {
    List<TokenOutput> all = new ArrayList<>(before);
    try (var h = harness(s)) {
      h.initializeState(snapshot);
      h.open();
      serve(h, 1_000);
      all.addAll(h.extractOutputValues());
    }
    return all;
  }

  /**
   * Moves the harness's clock (the admission window's timer) and runs the task's mails (the
   * engine's back-to-back steps) until none is left, as the task's mailbox loop would.
   */
  private static void serve(
      KeyedOneInputStreamOperatorTestHarness<String, TokenizedPrompt, TokenOutput> h, long time)
      throws Exception {
    h.setProcessingTime(time);
    TaskMailbox mails = h.getTaskMailbox();
    for (Optional<Mail> m; (m = mails.tryTake(TaskMailbox.MIN_PRIORITY)).isPresent(); ) {
      m.get().run();
    }
  }

  private static List<TokenizedPrompt> longPrompts(int n) {
    List<TokenizedPrompt> prompts = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      List<Integer> ids = new ArrayList<>();
      ids.add(1);
      for (int k = 1; k < 100; k++) {
        ids.add(3 + (k * 31 + i * 17) % 500);
      }
      PromptRequest r =
          PromptRequest.newBuilder()
              .setRequestId("long" + i)
              .setPromptTokenIds(ids)
              .setMaxNewTokens(i == 0 ? 8 : 24)
              .setIgnoreEos(true)
              .setSampling(SamplingOptions.newBuilder().setTemperature(0.7f).build())
              .build();
      prompts.add(tokenized(r, i));
    }
    return prompts;
  }

  private static KeyedOneInputStreamOperatorTestHarness<String, TokenizedPrompt, TokenOutput>
      harness() throws Exception {
    return harness(settings);
  }

  private static KeyedOneInputStreamOperatorTestHarness<String, TokenizedPrompt, TokenOutput>
      harness(InferenceSettings s) throws Exception {
    return harness(new InferenceOperator(s));
  }

  private static KeyedOneInputStreamOperatorTestHarness<String, TokenizedPrompt, TokenOutput>
      harness(InferenceOperator operator) throws Exception {
    return new KeyedOneInputStreamOperatorTestHarness<>(operator, p -> p.routingKey, Types.STRING);
  }

  /** Each request's token ids in index order; fails on a repeated or missing index. */
  private static Map<String, List<Integer>> tokensByRequest(List<TokenOutput> out) {
    Map<String, List<Integer>> tokens = new TreeMap<>();
    for (TokenOutput o : out) {
      if (o.index < 0) {
        continue;
      }
      List<Integer> t = tokens.computeIfAbsent(o.requestId, k -> new ArrayList<>());
      assertThat(o.index).as("token index of %s", o.requestId).isEqualTo(t.size());
      for (int id : o.tokenIds) {
        t.add(id);
      }
    }
    return tokens;
  }

  private static List<TokenizedPrompt> prompts() {
    return prompts("", 24);
  }

  /**
   * One request per prompt of {@link #PROMPTS}, after {@code prefix}, each {@code maxNewTokens}
   * long, greedy and sampled in turn.
   */
  private static List<TokenizedPrompt> prompts(String prefix, int maxNewTokens) {
    List<TokenizedPrompt> prompts = new ArrayList<>();
    for (int i = 0; i < PROMPTS.length; i++) {
      PromptRequest r =
          PromptRequest.newBuilder()
              .setRequestId("r" + i)
              .setPrompt(prefix + PROMPTS[i])
              .setMaxNewTokens(maxNewTokens)
              .setIgnoreEos(true)
              .setSampling(
                  SamplingOptions.newBuilder().setTemperature(i % 2 == 0 ? 0f : 0.8f).build())
              .build();
      prompts.add(tokenized(r, i));
    }
    return prompts;
  }

  private static TokenizedPrompt tokenized(PromptRequest r, long offset) {
    RequestValidator validator =
        new RequestValidator(
            model.tokenizer(), 512, RequestLimits.builder().maxNewTokens(256).build(), Set.of());
    ValidatedRequest v = validator.validate(r, 0).request();
    TokenizedPrompt p = new TokenizedPrompt();
    p.request = r;
    p.promptIds = v.promptIds();
    p.routingKey = v.routingKey();
    p.seed = v.req().params().seed();
    p.topic = "prompts";
    p.offset = offset;
    return p;
  }
}
