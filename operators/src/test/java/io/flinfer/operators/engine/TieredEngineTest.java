package io.flinfer.operators.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinfer.memcache.KvStoreType;
import io.flinfer.memcache.tier.HiCacheConfig;
import io.flinfer.memcache.tier.TierStats;
import io.flinfer.memcache.tier.WritePolicy;
import io.flinfer.runtime.forward.CpuModelRunner;
import io.flinfer.runtime.model.LlamaModel;
import io.flinfer.runtime.testing.SharedFiles;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Multi-turn conversations whose working set is eight times the KV pool, served round-robin so that
 * each conversation's prefix has left the pool by the time it returns: with host and storage tiers
 * every request gets the very tokens it gets without them, while computing fewer prefill tokens;
 * and after a restart the storage tier alone brings the prefixes back.
 */
class TieredEngineTest {
  private static final int CONVERSATIONS = 10;
  private static final int TURNS = 5;
  private static final int USER_TOKENS = 24;
  private static final int OUTPUT_TOKENS = 16;
  private static final int POOL = 192;

  private static LlamaModel model;

  @TempDir Path storage;

  @BeforeAll
  static void load() {
    model = SharedFiles.stories260k();
  }

  /** What one run measured, and every request's tokens. */
  record Run(Map<String, int[]> tokens, long prefillTokens, TierStats tiers) {}

  private static Run serve(EngineConfig cfg) {
    return serve(cfg, false);
  }

  /**
   * Serves the conversations, a turn's requests one at a time or, {@code together}, all at once.
   */
  private static Run serve(EngineConfig cfg, boolean together) {
    Map<String, int[]> out = new HashMap<>();
    Random rnd = new Random(42);
    int vocab = model.config().vocabSize();
    int[][] history = new int[CONVERSATIONS][];
    for (int c = 0; c < CONVERSATIONS; c++) {
      history[c] = new int[] {model.tokenizer().bosId()};
    }
    try (Engine e = new Engine(model, cfg, CpuModelRunner::new)) {
      for (int turn = 0; turn < TURNS; turn++) {
        List<Req> reqs = new ArrayList<>();
        for (int c = 0; c < CONVERSATIONS; c++) {
          int[] prompt = Arrays.copyOf(history[c], history[c].length + USER_TOKENS);
          for (int i = history[c].length; i < prompt.length; i++) {
            prompt[i] = 3 + rnd.nextInt(vocab - 3);
          }
          history[c] = prompt;
          reqs.add(
              Req.builder("c" + c + "t" + turn, prompt)
                  .maxNewTokens(OUTPUT_TOKENS)
                  .ignoreEos(true)
                  .namespace(c % 2 == 0 ? "" : "tenant")
                  .build());
        }
        Map<String, List<TokenEvent>> events = runChecked(e, reqs, together);
        for (int c = 0; c < CONVERSATIONS; c++) {
          int[] gen =
              events.get("c" + c + "t" + turn).stream().mapToInt(TokenEvent::tokenId).toArray();
          out.put("c" + c + "t" + turn, gen);
          int[] h = Arrays.copyOf(history[c], history[c].length + gen.length);
          System.arraycopy(gen, 0, h, history[c].length, gen.length);
          history[c] = h;
        }
      }
      int workingSet = Arrays.stream(history).mapToInt(h -> h.length).sum();
      assertThat(workingSet).isGreaterThanOrEqualTo(8 * e.poolSize());
      EngineStats s = e.stats();
      return new Run(out, s.prefillTokens(), s.tiers());
    }
  }

  /**
   * Runs the requests, one at a time (so each returns after others evicted it) or, {@code
   * together}, submitting each as soon as the engine accepts it; checks the pools after every step.
   */
  private static Map<String, List<TokenEvent>> runChecked(
      Engine e, List<Req> reqs, boolean together) {
    Map<String, List<TokenEvent>> out = new HashMap<>();
    ArrayDeque<Req> queue = new ArrayDeque<>(reqs);
    int guard = 0;
    while (!queue.isEmpty() || e.hasWork()) {
      if (!queue.isEmpty() && (together ? e.canAccept() : !e.hasWork())) {
        assertThat(e.submit(queue.poll())).isTrue();
        continue;
      }
      for (TokenEvent t : e.step()) {
        out.computeIfAbsent(t.requestId(), k -> new ArrayList<>()).add(t);
      }
      e.verifyInvariants();
      e.flushStorage(); // what storage holds at each match must not depend on timing
      assertThat(++guard).isLessThan(100_000);
    }
    return out;
  }

  private static EngineConfig config(int pageSize, KvStoreType kv, HiCacheConfig tiers) {
    return EngineConfig.builder()
        .maxTotalTokens(POOL)
        .pageSize(pageSize)
        .kvStoreType(kv)
        .chunkedPrefillSize(64)
        .threads(2)
        .hiCache(tiers)
        .build();
  }

  @ParameterizedTest(name = "page size {0}, KV {1}, {2}")
  @CsvSource({
    "1, FP32, WRITE_THROUGH",
    "4, FP8_E4M3, WRITE_BACK",
    "1, BF16, WRITE_THROUGH_SELECTIVE"
  })
  void tiersChangeNoTokenAndSparePrefill(int pageSize, KvStoreType kv, WritePolicy policy)
      throws IOException {
    Run plain = serve(config(pageSize, kv, null));

    HiCacheConfig host =
        HiCacheConfig.builder()
            .hostTokens(4096)
            .writePolicy(policy)
            .writeThroughThreshold(1)
            .build();
    Run withHost = serve(config(pageSize, kv, host));
    assertSameTokens(withHost, plain);
    assertThat(withHost.tiers().hostHitTokens()).isPositive();
    // Selective write-through keeps only what was hit: it spares less.
    long spared = policy == WritePolicy.WRITE_THROUGH_SELECTIVE ? 1 : 2;
    assertThat(withHost.prefillTokens()).isLessThan(plain.prefillTokens() / spared);

    Path dir = Files.createDirectories(storage.resolve(kv + "-" + pageSize));
    HiCacheConfig small =
        HiCacheConfig.builder()
            .hostTokens(POOL) // too small for the working set: the rest comes from storage
            .writePolicy(policy)
            .writeThroughThreshold(1)
            .storageDir(dir)
            .storagePageTokens(16)
            .build();
    Run withStorage = serve(config(pageSize, kv, small));
    assertSameTokens(withStorage, plain);
    assertThat(withStorage.tiers().storageHitTokens()).isPositive();

    // A restart: empty pool and host; the storage directory is all that is left.
    Run restarted = serve(config(pageSize, kv, small));
    assertSameTokens(restarted, plain);
    assertThat(restarted.tiers().storageHitTokens()).isPositive();
    assertThat(restarted.prefillTokens()).isLessThan(plain.prefillTokens() / spared);
  }

  /**
   * Every conversation's turn at once on the small pool: the round often has no room to load all of
   * a request's host part, and the request then waits for room instead of computing that part, so
   * with the host tier each turn computes only its new message (and the last answer token).
   */
  @Test
  void concurrentTurnsComputeOnlyTheirNewTokens() {
    Run plain = serve(config(1, KvStoreType.FP32, null));
    HiCacheConfig host =
        HiCacheConfig.builder().hostTokens(4096).writePolicy(WritePolicy.WRITE_THROUGH).build();
    Run together = serve(config(1, KvStoreType.FP32, host), true);
    assertSameTokens(together, plain);
    assertThat(together.prefillTokens())
        .isLessThanOrEqualTo((long) CONVERSATIONS * TURNS * (USER_TOKENS + 1));
  }

  /**
   * A request retracted under memory pressure hands its K/V to the cache, whose eviction moves it
   * to the host tier: readmitted, it loads prompt and outputs so far back rather than prefilling
   * them again, and its tokens are those it gets without tiers.
   */
  @ParameterizedTest(name = "{0}")
  @CsvSource({"WRITE_BACK", "WRITE_THROUGH"})
  void aRetractedRequestLoadsItsOwnKvBack(WritePolicy policy) {
    Random rnd = new Random(4);
    List<Req> reqs = new ArrayList<>();
    int promptTokens = 0;
    for (int i = 0; i < 6; i++) {
      int[] prompt = new int[12];
      prompt[0] = 10 + i; // no two share even their first token
      for (int t = 1; t < prompt.length; t++) {
        prompt[t] = 3 + rnd.nextInt(model.config().vocabSize() - 3);
      }
      promptTokens += prompt.length;
      reqs.add(Req.builder("q" + i, prompt).maxNewTokens(40).ignoreEos(true).build());
    }
    Map<String, int[]> expected = new HashMap<>();
    try (Engine e = new Engine(model, pressured(null), CpuModelRunner::new)) {
      submitAll(e, reqs).forEach(expected::put);
      assertThat(e.stats().retractions()).as("the pool forces retractions").isPositive();
    }
    HiCacheConfig host = HiCacheConfig.builder().hostTokens(4096).writePolicy(policy).build();
    try (Engine e = new Engine(model, pressured(host), CpuModelRunner::new)) {
      Map<String, int[]> actual = submitAll(e, reqs);
      EngineStats s = e.stats();
      assertThat(s.retractions()).isPositive();
      assertThat(s.tiers().hostHitTokens()).isPositive();
      // Each prompt once; a readmission computes only its last token, which decoding would have.
      assertThat(s.prefillTokens()).isLessThanOrEqualTo(promptTokens + s.retractions());
      assertThat(actual.keySet()).isEqualTo(expected.keySet());
      expected.forEach((id, tokens) -> assertThat(actual.get(id)).as(id).containsExactly(tokens));
    }
  }

  /**
   * A request scoring its prompt from a later position loads the prefix before it back from the
   * host tier, and scores what it scores with no cache at all; from its start, it loads nothing.
   */
  @Test
  void promptLogprobsReadPastAPrefixLoadedBackFromTheHost() {
    Random rnd = new Random(9);
    int vocab = model.config().vocabSize();
    int[] prompt = rnd.ints(100, 3, vocab).toArray();
    PromptLogprobs expected;
    try (Engine e = new Engine(model, pressured(null), CpuModelRunner::new)) {
      Req r = Req.builder("alone", prompt).promptLogprobs(2).maxNewTokens(1).build();
      expected = EngineTest.runAll(e, List.of(r)).get("alone").get(0).promptLogprobs();
    }
    HiCacheConfig host =
        HiCacheConfig.builder().hostTokens(4096).writePolicy(WritePolicy.WRITE_THROUGH).build();
    try (Engine e = new Engine(model, pressured(host), CpuModelRunner::new)) {
      EngineTest.runAll(e, List.of(Req.builder("warm", prompt).maxNewTokens(1).build()));
      List<Req> fillers = new ArrayList<>();
      for (int i = 0; i < 4; i++) {
        fillers.add(
            Req.builder("f" + i, rnd.ints(30, 3, vocab).toArray())
                .maxNewTokens(20)
                .ignoreEos(true)
                .build());
      }
      submitAll(e, fillers);
      long before = e.stats().tiers().hostHitTokens();
      Req late =
          Req.builder("late", prompt)
              .promptLogprobs(2)
              .promptLogprobsStart(60)
              .maxNewTokens(1)
              .build();
      PromptLogprobs got = EngineTest.runAll(e, List.of(late)).get("late").get(0).promptLogprobs();
      assertThat(e.stats().tiers().hostHitTokens() - before)
          .as("the prefix came back from the host")
          .isPositive();
      assertThat(got.logprobs())
          .isEqualTo(Arrays.copyOfRange(expected.logprobs(), 60, expected.count()));
      assertThat(got.topIds())
          .isEqualTo(Arrays.copyOfRange(expected.topIds(), 120, 2 * expected.count()));
      Req whole = Req.builder("whole", prompt).promptLogprobs(2).maxNewTokens(1).build();
      List<TokenEvent> events = EngineTest.runAll(e, List.of(whole)).get("whole");
      assertThat(events.get(0).promptLogprobs().logprobs()).isEqualTo(expected.logprobs());
      assertThat(events.get(events.size() - 1).cachedTokens()).isZero();
      e.verifyInvariants();
    }
  }

  private static EngineConfig pressured(HiCacheConfig tiers) {
    return EngineConfig.builder()
        .maxRunningRequests(8)
        .maxTotalTokens(160)
        .chunkedPrefillSize(0)
        .initNewTokenRatio(0.05)
        .minNewTokenRatio(0.05)
        .threads(1)
        .hiCache(tiers)
        .build();
  }

  /** Submits all requests at once and steps until done, checking the pools; each one's tokens. */
  private static Map<String, int[]> submitAll(Engine e, List<Req> reqs) {
    Map<String, List<Integer>> out = new HashMap<>();
    for (Req r : EngineTest.copies(reqs)) {
      assertThat(e.submit(r)).isTrue();
    }
    int guard = 0;
    while (e.hasWork()) {
      for (TokenEvent t : e.step()) {
        out.computeIfAbsent(t.requestId(), k -> new ArrayList<>()).add(t.tokenId());
      }
      e.verifyInvariants();
      assertThat(++guard).isLessThan(10_000);
    }
    Map<String, int[]> tokens = new HashMap<>();
    out.forEach((id, l) -> tokens.put(id, l.stream().mapToInt(Integer::intValue).toArray()));
    return tokens;
  }

  private static void assertSameTokens(Run actual, Run expected) {
    assertThat(actual.tokens().keySet()).isEqualTo(expected.tokens().keySet());
    for (var e : expected.tokens().entrySet()) {
      assertThat(actual.tokens().get(e.getKey())).as(e.getKey()).containsExactly(e.getValue());
    }
  }
}
