package io.flinfer.operators.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinfer.memcache.KvStoreType;
import io.flinfer.runtime.forward.CpuModelRunner;
import io.flinfer.runtime.model.LlamaModel;
import io.flinfer.runtime.sampling.SamplingParams;
import io.flinfer.runtime.testing.SharedFiles;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.BeforeContainer;

/**
 * Random serving workloads through the engine on the real stories260K model: shared and unshared
 * prefixes, random lengths and limits, stop strings and tokens, aborts and expired deadlines,
 * arrivals between steps, requests restored with generated tokens, tight and loose pools, page
 * sizes 1, 4 and 16, fp32 and 16-bit KV, every policy, the radix cache on and off, mixed chunks and
 * chunked prefill. After every step: {@code step()} has not thrown, the pool's slots add up and no
 * step evicted more than it lacked. At the end every request has ended for the right reason with
 * its tokens and log-probabilities bit for bit those of its solo run with the cache off, and
 * nothing leaked.
 */
class EnginePropertyTest {
  private static LlamaModel model;

  /** Solo runs, by request content and KV type: deterministic, so computed once. */
  private static final Map<String, List<TokenEvent>> SOLO = new ConcurrentHashMap<>();

  private static final int[][] PREFIXES = new int[4][];

  @BeforeContainer
  static void load() {
    model = SharedFiles.stories260k();
    java.util.Random rnd = new java.util.Random(99);
    for (int i = 0; i < PREFIXES.length; i++) {
      PREFIXES[i] = rnd.ints(8 + 10 * i, 3, model.config().vocabSize()).toArray();
      PREFIXES[i][0] = model.tokenizer().bosId();
    }
  }

  /** How one engine is set up. */
  record Setup(
      int poolTokens,
      int pageSize,
      KvStoreType kv,
      SchedulePolicy policy,
      boolean radix,
      boolean mixed,
      int chunk,
      int maxRunning) {
    EngineConfig config() {
      return EngineConfig.builder()
          .maxTotalTokens(poolTokens)
          .pageSize(pageSize)
          .kvStoreType(kv)
          .schedulePolicy(policy)
          .radixCache(radix)
          .mixedChunk(mixed)
          .chunkedPrefillSize(chunk)
          .maxRunningRequests(maxRunning)
          .threads(1)
          .build();
    }
  }

  /** What happens to a request besides being served. */
  enum Fate {
    SERVED,
    ABORTED_AFTER_A_FEW_STEPS,
    DEADLINE_PASSED,
    RESTORED
  }

  /**
   * One request: a prompt (a shared prefix, or none, then its own tokens), how it samples and
   * stops, when it arrives and what befalls it.
   */
  record Spec(
      int prefix,
      int[] own,
      long seed,
      float temperature,
      int topK,
      int maxNew,
      List<String> stops,
      int stopToken,
      boolean ignoreEos,
      int arriveAtStep,
      Fate fate,
      int fateParam) {
    int[] prompt() {
      int[] p = prefix < 0 ? new int[0] : PREFIXES[prefix];
      int[] out = Arrays.copyOf(p, p.length + own.length);
      System.arraycopy(own, 0, out, p.length, own.length);
      if (out.length == 0) {
        out = new int[] {model.tokenizer().bosId()};
      }
      return out;
    }

    SamplingParams params() {
      return temperature == 0
          ? SamplingParams.GREEDY
          : SamplingParams.builder().temperature(temperature).topK(topK).seed(seed).build();
    }

    Req.Builder builder(String id) {
      Req.Builder b =
          Req.builder(id, prompt())
              .params(params())
              .maxNewTokens(maxNew)
              .stopStrings(stops)
              .ignoreEos(ignoreEos);
      if (stopToken > 0) {
        b.stopTokenIds(stopToken);
      }
      return b;
    }

    String key(KvStoreType kv) {
      return kv
          + Arrays.toString(prompt())
          + seed
          + temperature
          + topK
          + maxNew
          + stops
          + stopToken
          + ignoreEos;
    }

    @Override
    public String toString() {
      return "Spec[prefix="
          + prefix
          + ", own="
          + own.length
          + " tokens, "
          + (temperature == 0 ? "greedy" : "t=" + temperature + " k=" + topK + " seed=" + seed)
          + ", max="
          + maxNew
          + (stops.isEmpty() ? "" : ", stops=" + stops)
          + (stopToken > 0 ? ", stopToken=" + stopToken : "")
          + (ignoreEos ? ", ignoreEos" : "")
          + ", arrives@"
          + arriveAtStep
          + ", "
          + fate
          + (fate == Fate.SERVED || fate == Fate.DEADLINE_PASSED ? "" : "(" + fateParam + ")")
          + "]";
    }
  }

  @Provide
  Arbitrary<Setup> setups() {
    return Combinators.combine(
            Arbitraries.of(128, 256, 4096),
            Arbitraries.of(1, 4, 16),
            Arbitraries.of(
                KvStoreType.FP32,
                KvStoreType.BF16,
                KvStoreType.FP16,
                KvStoreType.FP8_E4M3,
                KvStoreType.FP8_E5M2),
            Arbitraries.of(SchedulePolicy.class),
            Arbitraries.of(true, false),
            Arbitraries.of(true, false),
            Arbitraries.of(0, 16, 64),
            Arbitraries.of(1, 3, 8))
        .as(Setup::new);
  }

  @Provide
  Arbitrary<List<Spec>> workloads() {
    Arbitrary<List<Object>> sampling =
        Combinators.combine(
                Arbitraries.longs(),
                Arbitraries.of(0f, 0f, 0.8f, 1.2f),
                Arbitraries.of(0, 5, 40),
                Arbitraries.integers().between(1, 30))
            .as(List::<Object>of);
    Arbitrary<List<Object>> stopping =
        Combinators.combine(
                Arbitraries.of(
                    List.<String>of(), List.<String>of(), List.of("e"), List.of("the", ".")),
                Arbitraries.of(0, 0, 0, 13, 261, 426),
                Arbitraries.of(true, false))
            .as(List::<Object>of);
    Arbitrary<List<Object>> events =
        Combinators.combine(
                Arbitraries.integers().between(0, 6),
                Arbitraries.of(Fate.class),
                Arbitraries.integers().between(1, 6))
            .as(List::<Object>of);
    @SuppressWarnings("unchecked")
    Arbitrary<Spec> spec =
        Combinators.combine(
                Arbitraries.integers().between(-1, PREFIXES.length - 1),
                Arbitraries.integers()
                    .between(3, model.config().vocabSize() - 1)
                    .array(int[].class)
                    .ofMaxSize(30),
                sampling,
                stopping,
                events)
            .as(
                (prefix, own, smp, stop, ev) ->
                    new Spec(
                        prefix,
                        own,
                        (Long) smp.get(0),
                        (Float) smp.get(1),
                        (Integer) smp.get(2),
                        (Integer) smp.get(3),
                        (List<String>) stop.get(0),
                        (Integer) stop.get(1),
                        (Boolean) stop.get(2),
                        (Integer) ev.get(0),
                        (Fate) ev.get(1),
                        (Integer) ev.get(2)));
    return spec.list().ofMinSize(1).ofMaxSize(10);
  }

  @Property(tries = 200, shrinking = net.jqwik.api.ShrinkingMode.FULL)
  void everyRequestEndsRightWithItsSoloBitsAndNothingLeaks(
      @ForAll("setups") Setup setup, @ForAll("workloads") List<Spec> specs) {
    Map<String, Spec> byId = new HashMap<>();
    Map<String, List<TokenEvent>> out = new HashMap<>();
    Map<String, Integer> restoredAfter = new HashMap<>();
    try (Engine e = new Engine(model, setup.config(), CpuModelRunner::new)) {
      List<Req> queue = new ArrayList<>();
      int step = 0;
      int guard = 0;
      while (true) {
        for (int i = 0; i < specs.size(); i++) {
          Spec s = specs.get(i);
          if (s.arriveAtStep() == step) {
            String id = "r" + i;
            byId.put(id, s);
            Req.Builder b = s.builder(id);
            if (s.fate() == Fate.DEADLINE_PASSED) {
              b.deadlineEpochMillis(1);
            }
            if (s.fate() == Fate.RESTORED) {
              List<TokenEvent> solo = solo(s, setup.kv());
              int k = Math.min(s.fateParam(), solo.size() - 1);
              if (k > 0 && solo.get(k - 1).finish() == null) {
                int[] generated = new int[k];
                for (int j = 0; j < k; j++) {
                  generated[j] = solo.get(j).tokenId();
                }
                b.generated(generated);
                restoredAfter.put(id, k);
              }
            }
            queue.add(b.build());
          }
        }
        while (!queue.isEmpty() && e.submit(queue.get(0))) {
          queue.remove(0);
        }
        for (int i = 0; i < specs.size(); i++) {
          Spec s = specs.get(i);
          if (s.fate() == Fate.ABORTED_AFTER_A_FEW_STEPS
              && step == s.arriveAtStep() + s.fateParam()) {
            e.abort("r" + i);
          }
        }
        boolean arrivalsLeft = false;
        for (Spec s : specs) {
          arrivalsLeft |= s.arriveAtStep() > step;
        }
        if (!arrivalsLeft && queue.isEmpty() && !e.hasWork()) {
          break;
        }
        for (TokenEvent ev : e.step()) {
          out.computeIfAbsent(ev.requestId(), x -> new ArrayList<>()).add(ev);
        }
        e.verifyInvariants();
        int[] eviction = e.lastStepEviction();
        if (eviction[1] <= 0) {
          assertThat(eviction[0]).as("evicted without a shortfall").isZero();
        }
        assertThat(eviction[2]).as("evicted beyond the shortfall's last leaf").isNotPositive();
        step++;
        assertThat(++guard).as("no progress").isLessThan(20_000);
      }
      for (Map.Entry<String, Spec> entry : byId.entrySet()) {
        String id = entry.getKey();
        Spec s = entry.getValue();
        List<TokenEvent> got = out.get(id);
        assertThat(got).as("%s %s ended", id, s).isNotEmpty();
        FinishReason finish = got.get(got.size() - 1).finish();
        assertThat(finish).as("%s %s last event", id, s).isNotNull();
        List<TokenEvent> tokens = got.stream().filter(ev -> ev.index() >= 0).toList();
        List<TokenEvent> solo = solo(s, setup.kv());
        int skip = restoredAfter.getOrDefault(id, 0);
        List<TokenEvent> expected = solo.subList(skip, solo.size());
        switch (s.fate()) {
          case DEADLINE_PASSED:
            assertThat(tokens).isEmpty();
            assertThat(finish.type()).isEqualTo(FinishReason.Type.ABORT);
            break;
          case ABORTED_AFTER_A_FEW_STEPS:
            assertThat(tokens.size()).isLessThanOrEqualTo(expected.size());
            assertSameTokens(id, s, tokens, expected.subList(0, tokens.size()));
            if (finish.type() == FinishReason.Type.ABORT) {
              break;
            }
            assertSameTokens(id, s, tokens, expected);
            assertThat(finish).isEqualTo(expected.get(expected.size() - 1).finish());
            break;
          default:
            assertSameTokens(id, s, tokens, expected);
            assertThat(finish)
                .as("%s %s finish", id, s)
                .isEqualTo(expected.get(expected.size() - 1).finish());
        }
      }
      EngineTest.assertNoLeak(e);
    }
  }

  /**
   * A restored request finds a stop string whose text spans its last generated token and the next:
   * the string is made of two consecutive tokens of the request's own output, and the request is
   * restored with every token before the one that completes it.
   */
  @Property(tries = 40)
  void aStopStringAcrossTheRestorePointIsFound(
      @ForAll @net.jqwik.api.constraints.IntRange(min = 1, max = 20) int at,
      @ForAll @net.jqwik.api.constraints.LongRange(min = 0, max = 1000) long promptSeed) {
    int[] prompt =
        new java.util.Random(promptSeed).ints(10, 3, model.config().vocabSize()).toArray();
    Spec plain = new Spec(-1, prompt, 0, 0f, 0, 30, List.of(), 0, true, 0, Fate.SERVED, 0);
    List<TokenEvent> free = solo(plain, KvStoreType.FP32);
    io.flinfer.runtime.tokenizer.TextDecoder d =
        new io.flinfer.runtime.tokenizer.TextDecoder(model.tokenizer(), prompt[prompt.length - 1]);
    StringBuilder text = new StringBuilder();
    String piece = "";
    String stop = null;
    for (int i = 0; i < free.size() && stop == null; i++) {
      String next = d.next(free.get(i).tokenId());
      if (i == at && !piece.isEmpty() && !next.isEmpty()) {
        stop = piece + next;
      }
      piece = next;
      text.append(next);
    }
    net.jqwik.api.Assume.that(stop != null);
    Spec stopping = new Spec(-1, prompt, 0, 0f, 0, 30, List.of(stop), 0, true, 0, Fate.SERVED, 0);
    List<TokenEvent> whole = solo(stopping, KvStoreType.FP32);
    assertThat(whole.get(whole.size() - 1).finish()).isEqualTo(FinishReason.stop(stop));
    int n = whole.size();
    int[] generated = new int[n - 1];
    for (int i = 0; i < n - 1; i++) {
      generated[i] = whole.get(i).tokenId();
    }
    EngineConfig cfg = EngineConfig.builder().maxTotalTokens(512).threads(1).build();
    try (Engine e = new Engine(model, cfg, CpuModelRunner::new)) {
      List<TokenEvent> restored =
          EngineTest.runAll(e, List.of(stopping.builder("r").generated(generated).build()))
              .get("r");
      assertThat(restored).hasSize(1);
      assertThat(restored.get(0).tokenId()).isEqualTo(whole.get(n - 1).tokenId());
      assertThat(restored.get(0).finish()).isEqualTo(FinishReason.stop(stop));
    }
  }

  private static void assertSameTokens(
      String id, Spec s, List<TokenEvent> actual, List<TokenEvent> expected) {
    assertThat(actual).as("%s %s token count", id, s).hasSameSizeAs(expected);
    for (int i = 0; i < actual.size(); i++) {
      assertThat(actual.get(i).tokenId())
          .as("%s %s token %d", id, s, i)
          .isEqualTo(expected.get(i).tokenId());
      assertThat(Float.floatToRawIntBits(actual.get(i).logprob()))
          .as("%s %s logprob %d", id, s, i)
          .isEqualTo(Float.floatToRawIntBits(expected.get(i).logprob()));
    }
  }

  /** The request alone on an engine without prefix cache or chunking. */
  private static List<TokenEvent> solo(Spec s, KvStoreType kv) {
    return SOLO.computeIfAbsent(
        s.key(kv),
        k -> {
          EngineConfig cfg =
              EngineConfig.builder()
                  .maxRunningRequests(1)
                  .radixCache(false)
                  .chunkedPrefillSize(0)
                  .maxTotalTokens(512)
                  .kvStoreType(kv)
                  .threads(1)
                  .build();
          try (Engine e = new Engine(model, cfg, CpuModelRunner::new)) {
            return List.copyOf(
                EngineTest.runAll(e, List.of(s.builder("solo").build())).get("solo"));
          }
        });
  }
}
