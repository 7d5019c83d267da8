package io.flinfer.operators.engine;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.flinfer.memcache.KvStoreType;
import io.flinfer.runtime.grammar.JsonPrefix;
import io.flinfer.runtime.grammar.ResponseFormat;
import io.flinfer.runtime.model.LlamaModel;
import io.flinfer.runtime.sampling.SamplingParams;
import io.flinfer.runtime.testing.SharedFiles;
import io.flinfer.runtime.testing.TinyRandomModel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/** The engine on the real stories260K model. */
class EngineTest {
  private static LlamaModel model;

  @BeforeAll
  static void load() {
    model = SharedFiles.stories260k();
  }

  /** The model of {@link #workload}. */
  static LlamaModel model() {
    if (model == null) {
      load();
    }
    return model;
  }

  /** A mixed workload: shared and unshared prefixes, different lengths, greedy and seeded. */
  static List<Req> workload() {
    LlamaModel model = model();
    String lily =
        "Once upon a time, there was a little girl named Lily. She loved to play outside in the sun with her friends. One day,";
    String tom = "Tom and his dog went to the park. They saw a big tree and";
    String[] prompts = {
      lily + " she found a shiny stone",
      lily + " her mom said",
      lily + " it rained",
      lily + " a bird sang",
      tom + " a red ball",
      tom + " a cat",
      tom + " the dog ran",
      "The sun was hot.",
      "Sue had a toy car that she loved very much. It was red and fast",
      "Ben",
      "A little fish swam in the sea",
      "Mia and Sam"
    };
    List<Req> reqs = new ArrayList<>();
    for (int i = 0; i < prompts.length; i++) {
      SamplingParams p =
          i % 3 == 0
              ? SamplingParams.GREEDY
              : SamplingParams.builder()
                  .temperature(0.8f + 0.1f * (i % 2))
                  .topP(0.9f)
                  .topK(i % 2 == 0 ? 40 : 0)
                  .seed(1000 + i)
                  .build();
      reqs.add(
          Req.builder("r" + i, model.tokenizer().encode(prompts[i], true))
              .params(p)
              .maxNewTokens(20 + 7 * (i % 5))
              .ignoreEos(true)
              .build());
    }
    return reqs;
  }

  /** Copies of requests (an engine owns the ones it is given). */
  static List<Req> copies(List<Req> reqs) {
    List<Req> out = new ArrayList<>();
    for (Req r : reqs) {
      out.add(
          Req.builder(r.id(), r.originInputIds())
              .params(r.params())
              .maxNewTokens(r.maxNewTokens())
              .stopTokenIds(r.stopTokenIds())
              .stopStrings(r.stopStrings())
              .ignoreEos(r.ignoreEos())
              .namespace(r.namespace())
              .build());
    }
    return out;
  }

  static Map<String, List<TokenEvent>> runAll(Engine engine, List<Req> reqs) {
    return runAll(engine, reqs, e -> {});
  }

  /** Serves requests to the end, each as soon as the engine takes it; {@code afterStep} checks. */
  static Map<String, List<TokenEvent>> runAll(
      Engine engine, List<Req> reqs, java.util.function.Consumer<Engine> afterStep) {
    Map<String, List<TokenEvent>> out = new HashMap<>();
    List<Req> queue = new ArrayList<>(reqs);
    int guard = 0;
    while (!queue.isEmpty() || engine.hasWork()) {
      while (!queue.isEmpty() && engine.submit(queue.get(0))) {
        queue.remove(0);
      }
      for (TokenEvent e : engine.step()) {
        out.computeIfAbsent(e.requestId(), k -> new ArrayList<>()).add(e);
      }
      afterStep.accept(engine);
      assertThat(++guard).as("engine made no progress").isLessThan(100_000);
    }
    return out;
  }

  @ParameterizedTest(name = "page size {0}, KV {1}, {2}, mixed chunk {3}")
  @CsvSource({
    "1, FP32, LPM, true",
    "4, FP32, FCFS, false",
    "16, FP32, DFS_WEIGHT, true",
    "1, BF16, LPM, true",
    "16, FP16, LPM, false",
    "1, FP8_E4M3, LPM, true",
    "4, FP8_E5M2, FCFS, true"
  })
  void everyRequestGetsItsAloneTokensBitForBitUnderCachingChunkingAndRetraction(
      int pageSize, KvStoreType kv, SchedulePolicy policy, boolean mixedChunk) {
    List<Req> reqs = workload();
    Map<String, List<TokenEvent>> alone = new HashMap<>();
    EngineConfig solo =
        EngineConfig.builder()
            .maxRunningRequests(1)
            .radixCache(false)
            .chunkedPrefillSize(0)
            .maxTotalTokens(512)
            .kvStoreType(kv)
            .threads(1)
            .build();
    for (Req r : copies(reqs)) {
      try (Engine e = new Engine(model, solo, io.flinfer.runtime.forward.CpuModelRunner::new)) {
        alone.putAll(runAll(e, List.of(r)));
      }
    }
    EngineConfig stressed =
        EngineConfig.builder()
            .maxRunningRequests(8)
            .radixCache(true)
            .chunkedPrefillSize(16)
            .maxPrefillTokens(64)
            .maxTotalTokens(160)
            .pageSize(pageSize)
            .kvStoreType(kv)
            .schedulePolicy(policy)
            .mixedChunk(mixedChunk)
            .initNewTokenRatio(0.05)
            .minNewTokenRatio(0.01)
            .threads(2)
            .build();
    try (Engine e = new Engine(model, stressed, io.flinfer.runtime.forward.CpuModelRunner::new)) {
      Map<String, List<TokenEvent>> together = runAll(e, copies(reqs));
      EngineStats s = e.stats();
      assertThat(s.retractions()).as("retractions happened").isPositive();
      assertThat(s.cacheHitTokens()).as("prefix cache hits happened").isPositive();
      assertThat(
              together.values().stream().mapToInt(ev -> ev.get(ev.size() - 1).cachedTokens()).sum())
          .as("the last events report the requests' cache hits")
          .isPositive();
      for (Req r : reqs) {
        List<TokenEvent> a = alone.get(r.id());
        List<TokenEvent> t = together.get(r.id());
        assertThat(a).hasSize(r.maxNewTokens());
        assertThat(t).as(r.id()).hasSameSizeAs(a);
        for (int i = 0; i < a.size(); i++) {
          assertThat(t.get(i).tokenId()).as("%s token %d", r.id(), i).isEqualTo(a.get(i).tokenId());
          assertThat(Float.floatToRawIntBits(t.get(i).logprob()))
              .as("%s logprob %d", r.id(), i)
              .isEqualTo(Float.floatToRawIntBits(a.get(i).logprob()));
        }
        assertThat(t.get(t.size() - 1).finish().type()).isEqualTo(FinishReason.Type.LENGTH);
      }
      assertNoLeak(e);
    }
  }

  static void assertNoLeak(Engine e) {
    EngineStats s = e.stats();
    assertThat(s.runningRequests()).isZero();
    assertThat(s.kvProtectedTokens()).isZero();
    assertThat(s.kvFreeTokens() + s.kvEvictableTokens()).isEqualTo(s.kvTotalTokens());
    e.prefixCache().evict(Integer.MAX_VALUE);
    assertThat(e.stats().kvFreeTokens()).isEqualTo(s.kvTotalTokens());
  }

  @Test
  void aWorkloadTenTimesThePoolCompletes() {
    EngineConfig cfg =
        EngineConfig.builder()
            .maxRunningRequests(8)
            .maxTotalTokens(256)
            .chunkedPrefillSize(32)
            .threads(2)
            .build();
    List<Req> reqs = new ArrayList<>();
    for (int i = 0; i < 40; i++) {
      reqs.add(
          Req.builder(
                  "q" + i,
                  model
                      .tokenizer()
                      .encode(
                          "Once upon a time, there was a "
                              + (i % 7 == 0 ? "dog" : "girl")
                              + " number "
                              + i,
                          true))
              .maxNewTokens(50)
              .ignoreEos(true)
              .build());
    }
    int demand = reqs.stream().mapToInt(r -> r.promptLen() + r.maxNewTokens()).sum();
    try (Engine e = new Engine(model, cfg, io.flinfer.runtime.forward.CpuModelRunner::new)) {
      assertThat(demand).isGreaterThanOrEqualTo(10 * e.poolSize());
      Map<String, List<TokenEvent>> out = runAll(e, reqs);
      assertThat(out).hasSize(40);
      for (List<TokenEvent> events : out.values()) {
        assertThat(events).hasSize(50);
        assertThat(events.get(49).finish().type()).isEqualTo(FinishReason.Type.LENGTH);
      }
      assertNoLeak(e);
    }
  }

  @Test
  void requestsThatCannotFitEndAtOnceWithAClearReason() {
    EngineConfig cfg =
        EngineConfig.builder().maxRunningRequests(4).maxTotalTokens(300).threads(1).build();
    int[] tooLongForContext = new int[600];
    java.util.Arrays.fill(tooLongForContext, 300);
    int[] tooLongForPool = new int[400];
    java.util.Arrays.fill(tooLongForPool, 300);
    try (Engine e = new Engine(model, cfg, io.flinfer.runtime.forward.CpuModelRunner::new)) {
      Map<String, List<TokenEvent>> out =
          runAll(
              e,
              List.of(
                  Req.builder("ctx", tooLongForContext).build(),
                  Req.builder("pool", tooLongForPool).build(),
                  Req.builder("ok", model.tokenizer().encode("Lily", true))
                      .maxNewTokens(5)
                      .ignoreEos(true)
                      .build()));
      assertThat(out.get("ctx"))
          .singleElement()
          .satisfies(
              ev -> {
                assertThat(ev.finish().type()).isEqualTo(FinishReason.Type.ERROR);
                assertThat(ev.finish().detail())
                    .isEqualTo("the prompt has 600 tokens; the context holds 512");
              });
      assertThat(out.get("pool"))
          .singleElement()
          .satisfies(
              ev ->
                  assertThat(ev.finish().detail())
                      .isEqualTo("the prompt has 400 tokens; the KV pool holds 300"));
      assertThat(out.get("ok")).hasSize(5);
      assertNoLeak(e);
    }
  }

  @ParameterizedTest(name = "mixed chunk {0}")
  @ValueSource(booleans = {true, false})
  void anArrivalsPrefillAlsoDecodesTheRunningRequestsWhenMixing(boolean mixedChunk) {
    EngineConfig cfg =
        EngineConfig.builder().maxTotalTokens(256).threads(1).mixedChunk(mixedChunk).build();
    try (Engine e = new Engine(model, cfg, io.flinfer.runtime.forward.CpuModelRunner::new)) {
      e.submit(Req.builder("a", model.tokenizer().encode("Once", true)).maxNewTokens(8).build());
      e.step();
      e.step();
      e.submit(Req.builder("b", model.tokenizer().encode("Tom", true)).maxNewTokens(8).build());
      List<TokenEvent> withArrival = e.step();
      if (mixedChunk) {
        assertThat(withArrival).extracting(TokenEvent::requestId).containsExactly("b", "a");
        assertThat(withArrival.get(1).index()).isEqualTo(2);
      } else {
        assertThat(withArrival).extracting(TokenEvent::requestId).containsExactly("b");
      }
      while (e.hasWork()) {
        e.step();
      }
      assertNoLeak(e);
    }
  }

  @Test
  void abortFreesEverythingWhetherWaitingOrRunning() {
    EngineConfig cfg =
        EngineConfig.builder().maxRunningRequests(1).maxTotalTokens(256).threads(1).build();
    try (Engine e = new Engine(model, cfg, io.flinfer.runtime.forward.CpuModelRunner::new)) {
      e.submit(
          Req.builder("a", model.tokenizer().encode("Once upon a time", true))
              .maxNewTokens(100)
              .ignoreEos(true)
              .build());
      e.submit(Req.builder("b", model.tokenizer().encode("Tom", true)).maxNewTokens(100).build());
      List<TokenEvent> first = new ArrayList<>();
      for (int i = 0; i < 5; i++) {
        first.addAll(e.step());
      }
      assertThat(first).allMatch(ev -> ev.requestId().equals("a"));
      assertThat(e.abort("b")).isTrue(); // waiting
      assertThat(e.abort("a")).isTrue(); // running
      assertThat(e.abort("a")).isFalse();
      List<TokenEvent> ends = e.step();
      assertThat(ends).extracting(TokenEvent::requestId).containsExactlyInAnyOrder("a", "b");
      assertThat(ends).allMatch(ev -> ev.finish().type() == FinishReason.Type.ABORT);
      assertThat(e.hasWork()).isFalse();
      assertNoLeak(e);
    }
  }

  @Test
  void inputIsHeldBackWhileTheWaitingRequestsNeedTheWholePool() {
    EngineConfig cfg =
        EngineConfig.builder().maxRunningRequests(1).maxTotalTokens(256).threads(1).build();
    try (Engine e = new Engine(model, cfg, io.flinfer.runtime.forward.CpuModelRunner::new)) {
      int[] prompt = new int[100];
      java.util.Arrays.fill(prompt, 1, 100, 403);
      prompt[0] = 1;
      int taken = 0;
      while (e.canAccept()) {
        assertThat(e.submit(Req.builder("r" + taken, prompt).maxNewTokens(8).build())).isTrue();
        taken++;
      }
      // 100-token prompts against a 256-token pool: the third fills the pool's worth of demand.
      assertThat(taken).isEqualTo(3);
      assertThat(e.submit(Req.builder("late", prompt).maxNewTokens(8).build())).isFalse();
      // Once the first request is admitted, the queue takes input again.
      e.step();
      assertThat(e.canAccept()).isTrue();
      while (e.hasWork()) {
        e.step();
      }
      assertNoLeak(e);
    }
  }

  @Test
  void aRequestPastItsDeadlineIsAbortedWhereverItIs() throws Exception {
    EngineConfig cfg =
        EngineConfig.builder().maxRunningRequests(1).maxTotalTokens(512).threads(1).build();
    try (Engine e = new Engine(model, cfg, io.flinfer.runtime.forward.CpuModelRunner::new)) {
      int[] prompt = model.tokenizer().encode("Once upon a time", true);
      long soon = System.currentTimeMillis() + 150;
      e.submit(
          Req.builder("running", prompt)
              .maxNewTokens(200)
              .ignoreEos(true)
              .deadlineEpochMillis(soon)
              .build());
      e.submit(
          Req.builder("waiting", prompt)
              .maxNewTokens(4)
              .ignoreEos(true)
              .deadlineEpochMillis(soon)
              .build());
      e.submit(Req.builder("free", prompt).maxNewTokens(4).ignoreEos(true).build());
      Map<String, TokenEvent> last = new HashMap<>();
      Map<String, Integer> tokens = new HashMap<>();
      e.step();
      Thread.sleep(200);
      while (e.hasWork()) {
        for (TokenEvent ev : e.step()) {
          if (ev.index() >= 0) {
            tokens.merge(ev.requestId(), 1, Integer::sum);
          }
          if (ev.isLast()) {
            last.put(ev.requestId(), ev);
          }
        }
      }
      assertThat(last.get("running").finish().type()).isEqualTo(FinishReason.Type.ABORT);
      assertThat(last.get("running").finish().detail()).isEqualTo("deadline " + soon + " passed");
      assertThat(last.get("waiting").finish().type()).isEqualTo(FinishReason.Type.ABORT);
      assertThat(tokens.get("waiting")).isNull();
      assertThat(last.get("free").finish().type()).isEqualTo(FinishReason.Type.LENGTH);
      assertThat(tokens.get("free")).isEqualTo(4);
      assertNoLeak(e);
    }
  }

  @Test
  void stopStringsStopTokensAndTheLimit() {
    EngineConfig cfg =
        EngineConfig.builder().maxRunningRequests(4).maxTotalTokens(512).threads(1).build();
    int[] prompt = model.tokenizer().encode("Once upon a time", true);
    try (Engine e = new Engine(model, cfg, io.flinfer.runtime.forward.CpuModelRunner::new)) {
      // Greedy continues ", there was a little girl named Lily."
      Map<String, List<TokenEvent>> out =
          runAll(
              e,
              List.of(
                  Req.builder("str", prompt).maxNewTokens(60).stopStrings(List.of("named")).build(),
                  Req.builder("tok", prompt)
                      .maxNewTokens(60)
                      .stopTokenIds(SharedFiles.goldenIds()[3])
                      .build(),
                  Req.builder("len", prompt).maxNewTokens(7).build()));
      List<TokenEvent> str = out.get("str");
      assertThat(str.get(str.size() - 1).finish()).isEqualTo(FinishReason.stop("named"));
      int[] ids = str.stream().mapToInt(TokenEvent::tokenId).toArray();
      assertThat(model.tokenizer().decode(ids)).endsWith("named").doesNotContain("Lily");
      assertThat(out.get("tok")).hasSize(4);
      assertThat(out.get("tok").get(3).finish().type()).isEqualTo(FinishReason.Type.STOP);
      assertThat(out.get("len")).hasSize(7);
      assertThat(out.get("len").get(6).finish()).isEqualTo(FinishReason.length("max_new_tokens"));
      assertThat(out.get("len"))
          .extracting(TokenEvent::tokenId)
          .containsExactly(
              java.util.Arrays.stream(SharedFiles.goldenIds())
                  .limit(7)
                  .boxed()
                  .toArray(Integer[]::new));
    }
  }

  /**
   * Below min_tokens a request chooses no end token and no stop token, and no stop string ends it;
   * restored partway, it continues with the same tokens.
   */
  @Test
  void minTokensHoldsOffEveryEnding() {
    EngineConfig cfg =
        EngineConfig.builder().maxRunningRequests(4).maxTotalTokens(2048).threads(1).build();
    int[] prompt = model.tokenizer().encode("Once upon a time", true);
    int[] golden = SharedFiles.goldenIds();
    SamplingParams min8 = SamplingParams.builder().minTokens(8).build();
    SamplingParams min20 = SamplingParams.builder().minTokens(20).build();
    List<Req> reqs =
        List.of(
            Req.builder("tok", prompt)
                .params(min8)
                .maxNewTokens(60)
                .stopTokenIds(golden[3])
                .build(),
            Req.builder("str", prompt)
                .params(min20)
                .maxNewTokens(60)
                .stopStrings(List.of("named"))
                .build());
    Map<String, List<TokenEvent>> out;
    try (Engine e = new Engine(model, cfg, io.flinfer.runtime.forward.CpuModelRunner::new)) {
      out = runAll(e, reqs);
      assertNoLeak(e);
    }
    List<TokenEvent> tok = out.get("tok");
    assertThat(tok.size()).isGreaterThanOrEqualTo(8);
    assertThat(tok.subList(0, 8)).noneMatch(t -> t.tokenId() == golden[3]);
    // Greedy says "named" at about the twelfth token; it does not end the request before 20.
    assertThat(out.get("str").size()).isGreaterThanOrEqualTo(20);
    // Restored after five tokens, each continues as it did.
    for (Req r : reqs) {
      int[] head = out.get(r.id()).stream().limit(5).mapToInt(TokenEvent::tokenId).toArray();
      Req restored =
          Req.builder(r.id(), prompt)
              .params(r.params())
              .maxNewTokens(r.maxNewTokens())
              .stopTokenIds(r.id().equals("tok") ? new int[] {golden[3]} : new int[0])
              .stopStrings(r.id().equals("str") ? List.of("named") : List.of())
              .generated(head)
              .build();
      try (Engine e = new Engine(model, cfg, io.flinfer.runtime.forward.CpuModelRunner::new)) {
        assertThat(runAll(e, List.of(restored)).get(r.id()))
            .extracting(TokenEvent::tokenId)
            .as(r.id())
            .containsExactlyElementsOf(
                out.get(r.id()).stream().skip(5).map(TokenEvent::tokenId).toList());
      }
    }
  }

  @Test
  void alternativesComeWithEachTokenAndChangeNoToken() {
    EngineConfig cfg =
        EngineConfig.builder().maxRunningRequests(4).maxTotalTokens(512).threads(1).build();
    int[] prompt = model.tokenizer().encode("Once upon a time", true);
    SamplingParams sampled = SamplingParams.builder().temperature(0.9f).seed(5).build();
    List<Req> plain = new ArrayList<>();
    List<Req> withTop = new ArrayList<>();
    for (SamplingParams p : List.of(SamplingParams.GREEDY, sampled)) {
      String id = p.isGreedy() ? "greedy" : "sampled";
      plain.add(Req.builder(id, prompt).params(p).maxNewTokens(12).ignoreEos(true).build());
      withTop.add(
          Req.builder(id, prompt)
              .params(p.toBuilder().topLogprobs(5).build())
              .maxNewTokens(12)
              .ignoreEos(true)
              .build());
    }
    Map<String, List<TokenEvent>> a;
    Map<String, List<TokenEvent>> b;
    try (Engine e = new Engine(model, cfg, io.flinfer.runtime.forward.CpuModelRunner::new)) {
      a = runAll(e, plain);
    }
    try (Engine e = new Engine(model, cfg, io.flinfer.runtime.forward.CpuModelRunner::new)) {
      b = runAll(e, withTop);
    }
    for (String id : List.of("greedy", "sampled")) {
      assertThat(b.get(id))
          .extracting(TokenEvent::tokenId)
          .containsExactlyElementsOf(a.get(id).stream().map(TokenEvent::tokenId).toList());
      assertThat(b.get(id))
          .extracting(TokenEvent::logprob)
          .containsExactlyElementsOf(a.get(id).stream().map(TokenEvent::logprob).toList());
      assertThat(a.get(id)).allSatisfy(t -> assertThat(t.topIds()).isEmpty());
      for (TokenEvent t : b.get(id)) {
        assertThat(t.topIds()).hasSize(5).doesNotHaveDuplicates();
        assertThat(t.topLogprobs()).hasSize(5);
        for (int i = 1; i < 5; i++) {
          assertThat(t.topLogprobs()[i]).isLessThanOrEqualTo(t.topLogprobs()[i - 1]);
        }
        for (int i = 0; i < 5; i++) {
          if (t.topIds()[i] == t.tokenId()) {
            assertThat(t.topLogprobs()[i]).isEqualTo(t.logprob());
          }
        }
        if (id.equals("greedy")) {
          assertThat(t.topIds()[0]).isEqualTo(t.tokenId());
        }
      }
    }
  }

  /**
   * Requests held to a JSON object: their text is always the start of one (byte by byte), a request
   * that ends by completing it is an object to Jackson, and the rule of equal bits holds: batched
   * or alone, and restored from its tokens, a request gets the same tokens.
   */
  @Test
  void jsonObjectRequestsWriteOneObjectWithTheSameBitsAnywhere() throws Exception {
    EngineConfig cfg =
        EngineConfig.builder().maxRunningRequests(8).maxTotalTokens(2048).threads(1).build();
    int[] prompt = model.tokenizer().encode("Once upon a time", true);
    List<Req> reqs = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      SamplingParams p =
          (i == 0 ? SamplingParams.GREEDY.toBuilder() : SamplingParams.builder())
              .temperature(i == 0 ? 0f : 1.5f)
              .seed(70 + i)
              .topLogprobs(i % 2 == 0 ? 3 : 0)
              .responseFormat(ResponseFormat.JSON_OBJECT)
              .build();
      reqs.add(Req.builder("j" + i, prompt).params(p).maxNewTokens(400).build());
    }
    Map<String, List<TokenEvent>> batched;
    try (Engine e = new Engine(model, cfg, io.flinfer.runtime.forward.CpuModelRunner::new)) {
      batched = runAll(e, reqs);
      assertNoLeak(e);
    }
    for (Req r : reqs) {
      List<TokenEvent> events = batched.get(r.id());
      int[] ids = events.stream().mapToInt(TokenEvent::tokenId).toArray();
      byte[] text = model.tokenizer().decode(ids).getBytes(StandardCharsets.UTF_8);
      JsonPrefix prefix = new JsonPrefix();
      assertThat(prefix.accept(text, 0, text.length)).as(r.id()).isTrue();
      FinishReason finish = events.get(events.size() - 1).finish();
      if (finish.equals(FinishReason.stop("json"))) {
        assertThat(prefix.isComplete()).isTrue();
        assertThat(new ObjectMapper().readTree(text).isObject()).isTrue();
      } else {
        assertThat(finish).isEqualTo(FinishReason.length("max_new_tokens"));
      }
      for (TokenEvent t : events) {
        // Alternatives come from the same restricted distribution: all finite.
        for (float lp : t.topLogprobs()) {
          assertThat(lp).isFinite().isLessThanOrEqualTo(0f);
        }
      }
      // Alone, and restored after its first ten tokens.
      try (Engine e = new Engine(model, cfg, io.flinfer.runtime.forward.CpuModelRunner::new)) {
        Req alone = Req.builder(r.id(), prompt).params(r.params()).maxNewTokens(400).build();
        assertThat(runAll(e, List.of(alone)).get(r.id()))
            .extracting(TokenEvent::tokenId)
            .containsExactlyElementsOf(events.stream().map(TokenEvent::tokenId).toList());
        int[] head = java.util.Arrays.copyOf(ids, 10);
        Req restored =
            Req.builder(r.id(), prompt)
                .params(r.params())
                .maxNewTokens(400)
                .generated(head)
                .build();
        assertThat(runAll(e, List.of(restored)).get(r.id()))
            .extracting(TokenEvent::tokenId)
            .containsExactlyElementsOf(
                events.subList(10, events.size()).stream().map(TokenEvent::tokenId).toList());
      }
    }
  }

  /**
   * A thought capped at three tokens (the zoo's Qwen3, a logit bias on {@code <think>} making it
   * think on): the closing tokens follow the third, and a request restored anywhere, inside the
   * thought or between its closing tokens, continues with the same tokens.
   */
  @Test
  void aCappedThoughtIsClosedAndRestoredAlike() {
    LlamaModel qwen3 =
        io.flinfer.runtime.gguf.GgufModelLoader.load(
            SharedFiles.root().resolve("models/zoo/qwen3-tiny.gguf"));
    int think = 151667;
    int[] close = qwen3.tokenizer().encode("\n</think>\n\n", false, true);
    assertThat(close).containsExactly(198, 151668, 271);
    SamplingParams p =
        SamplingParams.builder()
            .temperature(0.9f)
            .seed(5)
            .logitBias(new int[] {think}, new float[] {100f})
            .thinking(io.flinfer.runtime.grammar.Thinking.MAY_OPEN)
            .thinkingBudget(3)
            .build();
    int[] prompt = qwen3.tokenizer().encode("<|im_start|>user\nHi<|im_end|>\n", false, true);
    EngineConfig cfg = EngineConfig.builder().maxTotalTokens(1024).threads(1).build();
    try (Engine e = new Engine(qwen3, cfg, io.flinfer.runtime.forward.CpuModelRunner::new)) {
      List<Integer> alone =
          runAll(e, List.of(Req.builder("t", prompt).params(p).maxNewTokens(9).build()))
              .get("t")
              .stream()
              .map(TokenEvent::tokenId)
              .toList();
      assertThat(alone).containsExactly(think, think, think, think, 198, 151668, 271, think, think);
      for (int k : new int[] {2, 5, 7}) {
        int[] head = alone.subList(0, k).stream().mapToInt(Integer::intValue).toArray();
        Req restored =
            Req.builder("t" + k, prompt).params(p).maxNewTokens(9).generated(head).build();
        assertThat(runAll(e, List.of(restored)).get("t" + k))
            .extracting(TokenEvent::tokenId)
            .as("restored after %d tokens", k)
            .containsExactlyElementsOf(alone.subList(k, alone.size()));
      }
    }
  }

  /**
   * A random-weight model over a byte vocabulary spreads its choices, so its JSON requests close
   * their objects: each ends with the closing brace, as {@code stop(json)}, and its text is one
   * object to Jackson.
   */
  @Test
  void aJsonRequestEndsWhereItsObjectCloses(@TempDir Path dir) throws Exception {
    LlamaModel random = TinyRandomModel.write(dir, 11);
    EngineConfig cfg =
        EngineConfig.builder().maxRunningRequests(4).maxTotalTokens(16384).threads(1).build();
    int[] prompt = random.tokenizer().encode("Write JSON.", true);
    List<Req> reqs = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      SamplingParams p =
          SamplingParams.builder()
              .temperature(1f)
              .seed(i)
              .responseFormat(ResponseFormat.JSON_OBJECT)
              .build();
      reqs.add(Req.builder("o" + i, prompt).params(p).maxNewTokens(4000).build());
    }
    try (Engine e = new Engine(random, cfg, io.flinfer.runtime.forward.CpuModelRunner::new)) {
      Map<String, List<TokenEvent>> out = runAll(e, reqs);
      for (Req r : reqs) {
        List<TokenEvent> events = out.get(r.id());
        assertThat(events.get(events.size() - 1).finish()).isEqualTo(FinishReason.stop("json"));
        int[] ids = events.stream().mapToInt(TokenEvent::tokenId).toArray();
        String text = random.tokenizer().decode(ids);
        assertThat(text.strip()).endsWith("}");
        assertThat(new ObjectMapper().readTree(text).isObject()).isTrue();
      }
    }
  }

  /**
   * The same random-weight model held to a schema: each request ends where its object closes, with
   * every property in the schema's order and of its type.
   */
  @Test
  void aJsonSchemaRequestWritesAnInstanceOfItsSchema(@TempDir Path dir) throws Exception {
    LlamaModel random = TinyRandomModel.write(dir, 12);
    EngineConfig cfg =
        EngineConfig.builder().maxRunningRequests(4).maxTotalTokens(16384).threads(1).build();
    String schema =
        "{\"type\": \"object\", \"properties\": {\"id\": {\"type\": \"integer\"},"
            + " \"tags\": {\"type\": \"array\", \"items\": {\"enum\": [\"a\", \"b\"]},"
            + " \"maxItems\": 3}, \"ok\": {\"type\": [\"boolean\", \"null\"]}}}";
    List<Req> reqs = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      SamplingParams p =
          SamplingParams.builder()
              .temperature(1f)
              .seed(i)
              .responseFormat(ResponseFormat.JSON_SCHEMA)
              .jsonSchema(schema)
              .build();
      reqs.add(
          Req.builder("s" + i, random.tokenizer().encode("JSON:", true))
              .params(p)
              .maxNewTokens(4000)
              .build());
    }
    try (Engine e = new Engine(random, cfg, io.flinfer.runtime.forward.CpuModelRunner::new)) {
      Map<String, List<TokenEvent>> out = runAll(e, reqs);
      for (Req r : reqs) {
        List<TokenEvent> events = out.get(r.id());
        assertThat(events.get(events.size() - 1).finish()).isEqualTo(FinishReason.stop("json"));
        String text =
            random.tokenizer().decode(events.stream().mapToInt(TokenEvent::tokenId).toArray());
        com.fasterxml.jackson.databind.JsonNode node = new ObjectMapper().readTree(text);
        List<String> keys = new ArrayList<>();
        node.fieldNames().forEachRemaining(keys::add);
        assertThat(keys).as(text).containsExactly("id", "tags", "ok");
        assertThat(node.get("id").isIntegralNumber()).isTrue();
        assertThat(node.get("tags").size()).isLessThanOrEqualTo(3);
        node.get("tags").forEach(t -> assertThat(t.asText()).isIn("a", "b"));
        assertThat(node.get("ok").isBoolean() || node.get("ok").isNull()).isTrue();
      }
      assertNoLeak(e);
    }
  }

  /**
   * Requests held to regular expressions on a random-weight model: each ends where its match can go
   * no further ({@code stop(regex)}), or with its end token (made likely by a bias) where it has
   * matched, and its text is a match to Java's matcher; batched, alone and restored after two
   * tokens, each gets the same tokens.
   */
  @Test
  void regexRequestsEndInMatchesWithTheSameBitsAnywhere(@TempDir Path dir) throws Exception {
    LlamaModel random = TinyRandomModel.write(dir, 14);
    int eos = random.tokenizer().eosId();
    List<SamplingParams> params = new ArrayList<>();
    for (String regex :
        List.of("(yes|no|maybe)", "[a-z]{2,6}( [a-z]{2,6}){0,2}\\.", "\\d+", "(ab|é)+c?")) {
      params.add(
          SamplingParams.builder()
              .temperature(1f)
              .seed(params.size())
              .logitBias(new int[] {eos}, new float[] {5f})
              .responseFormat(ResponseFormat.REGEX)
              .regex(regex)
              .build());
    }
    shapedRequestsKeepTheirBits(
        random,
        "Answer:",
        params,
        2,
        (r, ids, finish) -> {
          assertThat(finish).as(r.id()).isIn(FinishReason.stop("regex"), FinishReason.stop("eos"));
          int[] text = ids.stream().filter(t -> t != eos).mapToInt(Integer::intValue).toArray();
          assertThat(random.tokenizer().decode(text)).as(r.id()).matches(r.params().regex());
        });
  }

  /** What a request of {@link #shapedRequestsKeepTheirBits} must have written, and how it ended. */
  private interface ShapedCheck {
    void check(Req r, List<Integer> ids, FinishReason finish) throws Exception;
  }

  /**
   * Requests sampled with {@code params}, after {@code prompt}, on {@code model}, batched: each
   * passes {@code check}, and alone, and restored after its first {@code head} tokens, it gets the
   * same tokens; nothing leaks.
   */
  private static void shapedRequestsKeepTheirBits(
      LlamaModel model, String prompt, List<SamplingParams> params, int head, ShapedCheck check)
      throws Exception {
    EngineConfig cfg =
        EngineConfig.builder().maxRunningRequests(4).maxTotalTokens(16384).threads(1).build();
    int[] ids = model.tokenizer().encode(prompt, true);
    List<Req> reqs = new ArrayList<>();
    for (SamplingParams p : params) {
      reqs.add(Req.builder("q" + reqs.size(), ids).params(p).maxNewTokens(4000).build());
    }
    try (Engine e = new Engine(model, cfg, io.flinfer.runtime.forward.CpuModelRunner::new)) {
      Map<String, List<TokenEvent>> out = runAll(e, reqs);
      assertNoLeak(e);
      for (Req r : reqs) {
        List<TokenEvent> events = out.get(r.id());
        List<Integer> tokens = events.stream().map(TokenEvent::tokenId).toList();
        check.check(r, tokens, events.get(events.size() - 1).finish());
        assertAloneAndRestoredAlike(e, r, ids, tokens, head);
      }
    }
  }

  /**
   * {@code r} run alone on {@code e} gets the tokens {@code ids} it got in a batch, and restored
   * after its first {@code head} of them (where it has more), the rest.
   */
  private static void assertAloneAndRestoredAlike(
      Engine e, Req r, int[] prompt, List<Integer> ids, int head) {
    Req alone = Req.builder(r.id(), prompt).params(r.params()).maxNewTokens(4000).build();
    assertThat(runAll(e, List.of(alone)).get(r.id()))
        .extracting(TokenEvent::tokenId)
        .containsExactlyElementsOf(ids);
    if (ids.size() > head) {
      Req restored =
          Req.builder(r.id(), prompt)
              .params(r.params())
              .maxNewTokens(4000)
              .generated(ids.subList(0, head).stream().mapToInt(Integer::intValue).toArray())
              .build();
      assertThat(runAll(e, List.of(restored)).get(r.id()))
          .extracting(TokenEvent::tokenId)
          .containsExactlyElementsOf(ids.subList(head, ids.size()));
    }
  }

  /**
   * Requests held to a GBNF grammar of nested lists on a random-weight model: each ends where its
   * outer list closes ({@code stop(grammar)}), its text is that list to Jackson, and batched, alone
   * and restored after three tokens it gets the same tokens.
   */
  @Test
  void grammarRequestsEndInWhatTheGrammarDerivesWithTheSameBits(@TempDir Path dir)
      throws Exception {
    LlamaModel random = TinyRandomModel.write(dir, 15);
    String gbnf =
        "root ::= list\nlist ::= \"[\" ( item ( \",\" item )* )? \"]\"\nitem ::= [0-9] | list";
    List<SamplingParams> params = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      params.add(
          SamplingParams.builder()
              .temperature(1f)
              .seed(i)
              .responseFormat(ResponseFormat.GRAMMAR)
              .grammar(gbnf)
              .build());
    }
    shapedRequestsKeepTheirBits(
        random,
        "Lists:",
        params,
        3,
        (r, ids, finish) -> {
          assertThat(finish).isEqualTo(FinishReason.stop("grammar"));
          String text =
              random.tokenizer().decode(ids.stream().mapToInt(Integer::intValue).toArray());
          assertThat(new ObjectMapper().readTree(text).isArray()).as(text).isTrue();
        });
  }

  /**
   * With its end token made likely (a logit bias of +5 on EOS), a random-weight model's request
   * ends within a few tokens; with min_tokens 30 it chooses no EOS before its thirtieth token.
   */
  @Test
  void minTokensKeepsTheEndTokenOutUntilItsCount(@TempDir Path dir) throws Exception {
    LlamaModel random = TinyRandomModel.write(dir, 13);
    int eos = random.tokenizer().eosId();
    EngineConfig cfg =
        EngineConfig.builder().maxRunningRequests(8).maxTotalTokens(8192).threads(1).build();
    List<Req> reqs = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      SamplingParams.Builder p =
          SamplingParams.builder()
              .temperature(1f)
              .seed(i)
              .logitBias(new int[] {eos}, new float[] {5f});
      int[] prompt = random.tokenizer().encode("Hi", true);
      reqs.add(Req.builder("free" + i, prompt).params(p.build()).maxNewTokens(100).build());
      reqs.add(
          Req.builder("min" + i, prompt).params(p.minTokens(30).build()).maxNewTokens(100).build());
    }
    try (Engine e = new Engine(random, cfg, io.flinfer.runtime.forward.CpuModelRunner::new)) {
      Map<String, List<TokenEvent>> out = runAll(e, reqs);
      int early = 0;
      for (int i = 0; i < 4; i++) {
        early += out.get("free" + i).size() < 30 ? 1 : 0;
        List<TokenEvent> min = out.get("min" + i);
        // Tokens 0 to 29 are below the count: EOS can come at token 30 at the earliest.
        assertThat(min.size()).isGreaterThanOrEqualTo(31);
        assertThat(min.subList(0, 30)).noneMatch(t -> t.tokenId() == eos);
        assertThat(min.get(min.size() - 1).finish()).isEqualTo(FinishReason.stop("eos"));
      }
      assertThat(early).as("requests without min_tokens that ended before 30").isEqualTo(4);
      assertNoLeak(e);
    }
  }

  /** A request restored with tokens that already close its object ends at once. */
  @Test
  void aRestoredJsonRequestWhoseObjectIsCompleteEndsAtOnce() {
    EngineConfig cfg =
        EngineConfig.builder().maxRunningRequests(4).maxTotalTokens(512).threads(1).build();
    int[] prompt = model.tokenizer().encode("Once upon a time", true);
    SamplingParams p = SamplingParams.builder().responseFormat(ResponseFormat.JSON_OBJECT).build();
    try (Engine e = new Engine(model, cfg, io.flinfer.runtime.forward.CpuModelRunner::new)) {
      Req done =
          Req.builder("done", prompt)
              .params(p)
              .maxNewTokens(50)
              .generated(model.tokenizer().encode("{\"a\": 1}", false))
              .build();
      Req wrong =
          Req.builder("wrong", prompt)
              .params(p)
              .maxNewTokens(50)
              .generated(model.tokenizer().encode("Once", false))
              .build();
      Map<String, List<TokenEvent>> out = runAll(e, List.of(done, wrong));
      assertThat(out.get("done"))
          .singleElement()
          .satisfies(
              t -> {
                assertThat(t.finish()).isEqualTo(FinishReason.stop("json"));
              });
      assertThat(out.get("wrong").get(0).finish().type()).isEqualTo(FinishReason.Type.ERROR);
      assertNoLeak(e);
    }
  }
}
