package io.flinfer.operators.engine;

import static io.flinfer.operators.engine.EngineTest.runAll;
import static org.assertj.core.api.Assertions.assertThat;

import io.flinfer.runtime.forward.CpuModelRunner;
import io.flinfer.runtime.model.LlamaModel;
import io.flinfer.runtime.testing.SharedFiles;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** One test per engine bug found against SGLang's scheduler; each failed before its fix. */
class EngineRegressionTest {
  private static LlamaModel model;

  @BeforeAll
  static void load() {
    model = SharedFiles.stories260k();
  }

  /** Random tokens (no BOS: prompts that share nothing, not even their first token). */
  private static int[] randomPrompt(Random rnd, int len) {
    return rnd.ints(len, 3, model.config().vocabSize()).toArray();
  }

  private static int[] concat(int[] a, int[] b) {
    int[] out = Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, out, a.length, b.length);
    return out;
  }

  /**
   * A 256-token pool holds two cached 120-token prefixes; two requests extend each by 20. Before
   * the fix admission read free plus evictable once, locked both prefixes (leaving nothing
   * evictable) and the step failed with "KV pool exhausted after eviction: need 40, free 16".
   */
  @Test
  void admissionRechecksTheBudgetAfterLockingAPrefix() {
    EngineConfig cfg =
        EngineConfig.builder()
            .maxRunningRequests(4)
            .maxTotalTokens(256)
            .chunkedPrefillSize(0)
            .threads(1)
            .build();
    Random rnd = new Random(1);
    int[] a = randomPrompt(rnd, 120);
    int[] b = randomPrompt(rnd, 120);
    try (Engine e = new Engine(model, cfg, CpuModelRunner::new)) {
      runAll(
          e,
          List.of(
              Req.builder("a", a).maxNewTokens(1).ignoreEos(true).build(),
              Req.builder("b", b).maxNewTokens(1).ignoreEos(true).build()));
      assertThat(e.stats().kvEvictableTokens()).isEqualTo(240);
      assertThat(e.stats().kvFreeTokens()).isEqualTo(16);
      Map<String, List<TokenEvent>> out =
          runAll(
              e,
              List.of(
                  Req.builder("a+", concat(a, randomPrompt(rnd, 20)))
                      .maxNewTokens(4)
                      .ignoreEos(true)
                      .build(),
                  Req.builder("b+", concat(b, randomPrompt(rnd, 20)))
                      .maxNewTokens(4)
                      .ignoreEos(true)
                      .build()));
      assertThat(out.get("a+")).hasSize(4);
      assertThat(out.get("b+")).hasSize(4);
      assertThat(e.stats().retractions()).isZero();
      EngineTest.assertNoLeak(e);
    }
  }

  /**
   * Admission never retracts a running request to make room for new work: with requests decoding
   * and the pool nearly full, arrivals wait instead.
   */
  @Test
  void arrivalsWaitRatherThanRetractRunningRequests() {
    EngineConfig cfg =
        EngineConfig.builder()
            .maxRunningRequests(8)
            .maxTotalTokens(200)
            .chunkedPrefillSize(256)
            .initNewTokenRatio(0.1)
            .minNewTokenRatio(0.1)
            .threads(1)
            .build();
    Random rnd = new Random(2);
    try (Engine e = new Engine(model, cfg, CpuModelRunner::new)) {
      List<Req> first = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        first.add(
            Req.builder("run" + i, randomPrompt(rnd, 30)).maxNewTokens(30).ignoreEos(true).build());
      }
      for (Req r : first) {
        e.submit(r);
      }
      e.step(); // all three running
      assertThat(e.stats().runningRequests()).isEqualTo(3);
      long before = e.stats().retractions();
      for (int i = 0; i < 3; i++) {
        e.submit(
            Req.builder("new" + i, randomPrompt(rnd, 40)).maxNewTokens(10).ignoreEos(true).build());
      }
      // Each step may admit what fits; none may retract a running request to do so, until the
      // first three decode past the point where decoding itself runs short.
      for (int step = 0; step < 3; step++) {
        e.step();
        e.verifyInvariants();
      }
      assertThat(e.stats().retractions()).isEqualTo(before);
    }
  }

  /**
   * A restored request rebuilds the text its stop strings are matched in from its generated tokens:
   * before the fix a stop string that straddled the checkpoint was never seen and the request ran
   * to its limit.
   */
  @Test
  void aRestoredRequestFindsAStopStringThatStraddlesTheCheckpoint() {
    EngineConfig cfg = EngineConfig.builder().maxTotalTokens(512).threads(1).build();
    int[] prompt = model.tokenizer().encode("Once upon a time", true);
    List<String> stop = List.of("little girl");
    try (Engine e = new Engine(model, cfg, CpuModelRunner::new)) {
      List<TokenEvent> whole =
          runAll(e, List.of(Req.builder("w", prompt).maxNewTokens(40).stopStrings(stop).build()))
              .get("w");
      assertThat(whole.get(whole.size() - 1).finish()).isEqualTo(FinishReason.stop("little girl"));
      int n = whole.size();
      int[] tokens = whole.stream().mapToInt(TokenEvent::tokenId).toArray();
      // " little" is the token before " girl": restore with it generated already.
      int[] generated = Arrays.copyOf(tokens, n - 1);
      List<TokenEvent> restored =
          runAll(
                  e,
                  List.of(
                      Req.builder("r", prompt)
                          .maxNewTokens(40)
                          .stopStrings(stop)
                          .generated(generated)
                          .build()))
              .get("r");
      assertThat(restored).hasSize(1);
      assertThat(restored.get(0).tokenId()).isEqualTo(tokens[n - 1]);
      assertThat(restored.get(0).finish()).isEqualTo(FinishReason.stop("little girl"));
    }
  }

  /**
   * llama2.c models end a story by sampling BOS, where run.c stops; the GGUF families have end
   * tokens in their metadata. Before the fix only EOS ended a request.
   */
  @Test
  void aModelsEndTokensEndARequest() {
    assertThat(model.tokenizer().endTokens()).containsExactly(1, 2);
    Req r = Req.builder("x", model.tokenizer().encode("Once", true)).maxNewTokens(10).build();
    r.effectiveMaxNewTokens = 10;
    r.append(1);
    assertThat(FinishCheck.after(r, 1, model.tokenizer().endTokens()))
        .isEqualTo(FinishReason.stop("eos"));
    Req ignoring =
        Req.builder("y", model.tokenizer().encode("Once", true))
            .maxNewTokens(10)
            .ignoreEos(true)
            .build();
    ignoring.effectiveMaxNewTokens = 10;
    ignoring.append(1);
    assertThat(FinishCheck.after(ignoring, 1, model.tokenizer().endTokens())).isNull();
  }

  /**
   * The cache hit count is each request's prefix at its first admission: before the fix a retracted
   * request readmitted with its own tokens cached counted them again.
   */
  @Test
  void aRetractedRequestsReadmissionIsNoCacheHit() {
    EngineConfig cfg =
        EngineConfig.builder()
            .maxRunningRequests(8)
            .maxTotalTokens(160)
            .chunkedPrefillSize(0)
            .initNewTokenRatio(0.05)
            .minNewTokenRatio(0.05)
            .threads(1)
            .build();
    Random rnd = new Random(4);
    List<Req> reqs = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      int[] prompt = randomPrompt(rnd, 12);
      prompt[0] = 10 + i; // no two share even their first token
      reqs.add(Req.builder("q" + i, prompt).maxNewTokens(40).ignoreEos(true).build());
    }
    try (Engine e = new Engine(model, cfg, CpuModelRunner::new)) {
      Map<String, List<TokenEvent>> out = runAll(e, reqs);
      assertThat(e.stats().retractions()).as("the pool forces retractions").isPositive();
      // Distinct random prompts share nothing: no token was ever a cache hit.
      assertThat(e.stats().cacheHitTokens()).isZero();
      for (List<TokenEvent> events : out.values()) {
        assertThat(events).hasSize(40);
        assertThat(events.get(39).cachedTokens()).isZero();
      }
    }
  }

  /**
   * Every step evicts no more than it lacks: before the fix the page-size-1 allocator's locality
   * rule asked for a free group of 16 slots per request that could not continue its run, and a step
   * could flush the whole cache with free slots to spare.
   */
  @Test
  void aStepWithFreeSlotsToSpareEvictsNothing() {
    EngineConfig cfg =
        EngineConfig.builder().maxRunningRequests(16).maxTotalTokens(1024).threads(1).build();
    Random rnd = new Random(6);
    try (Engine e = new Engine(model, cfg, CpuModelRunner::new)) {
      List<Req> wave = new ArrayList<>();
      for (int i = 0; i < 16; i++) {
        wave.add(
            Req.builder("a" + i, randomPrompt(rnd, 30)).maxNewTokens(20).ignoreEos(true).build());
      }
      runAll(e, wave);
      int cached = e.stats().kvEvictableTokens();
      assertThat(cached).isPositive();
      List<Req> next = new ArrayList<>();
      for (int i = 0; i < 8; i++) {
        next.add(
            Req.builder("b" + i, randomPrompt(rnd, 10)).maxNewTokens(5).ignoreEos(true).build());
      }
      for (Req r : next) {
        e.submit(r);
      }
      while (e.hasWork()) {
        int free = e.stats().kvFreeTokens();
        e.step();
        int[] ev = e.lastStepEviction();
        if (free >= 8 * 15) {
          assertThat(ev[0]).as("evicted with %d free slots", free).isZero();
        }
      }
    }
  }
}
