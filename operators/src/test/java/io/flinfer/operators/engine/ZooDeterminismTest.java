package io.flinfer.operators.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinfer.runtime.gguf.GgufModelLoader;
import io.flinfer.runtime.model.LlamaModel;
import io.flinfer.runtime.sampling.SamplingParams;
import io.flinfer.runtime.testing.SharedFiles;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The determinism rule on every family's layout: a request batched with others, its prompt
 * prefilled in chunks and partly served from the radix cache, gets bit for bit the tokens and
 * log-probabilities it gets alone with no cache.
 */
class ZooDeterminismTest {
  private record Result(List<Integer> tokens, List<Float> logprobs) {}

  private static List<Req> requests(LlamaModel model) {
    Random rnd = new Random(11);
    int vocab = model.config().vocabSize();
    int[] shared = rnd.ints(40, 0, vocab).toArray();
    List<Req> out = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      int own = 5 + rnd.nextInt(30);
      int[] prompt = new int[(i % 2 == 0 ? shared.length : 0) + own];
      if (i % 2 == 0) {
        System.arraycopy(shared, 0, prompt, 0, shared.length);
      }
      for (int k = prompt.length - own; k < prompt.length; k++) {
        prompt[k] = rnd.nextInt(vocab);
      }
      SamplingParams p =
          i % 3 == 0
              ? SamplingParams.GREEDY
              : SamplingParams.builder().temperature(0.8f).topK(40).seed(i).build();
      out.add(Req.builder("r" + i, prompt).params(p).maxNewTokens(10).ignoreEos(true).build());
    }
    return out;
  }

  /** Prompt tokens the last {@link #serve} took from the prefix cache. */
  private long cacheHits;

  private Map<String, Result> serve(LlamaModel model, EngineConfig config, List<Req> reqs) {
    Map<String, Result> out = new HashMap<>();
    try (Engine e = Engine.create(model, config)) {
      List<Req> queue = new ArrayList<>(reqs);
      int steps = 0;
      while (!queue.isEmpty() || e.hasWork()) {
        // Half arrive first; the rest join two steps later and find the shared prefix cached.
        if (!queue.isEmpty() && (steps == 0 || steps >= 2)) {
          int n = steps == 0 ? Math.max(1, queue.size() / 2) : queue.size();
          for (int i = 0; i < n; i++) {
            assertThat(e.submit(queue.remove(0))).isTrue();
          }
        }
        for (TokenEvent ev : e.step()) {
          if (ev.index() >= 0) {
            Result r =
                out.computeIfAbsent(
                    ev.requestId(), k -> new Result(new ArrayList<>(), new ArrayList<>()));
            r.tokens.add(ev.tokenId());
            r.logprobs.add(ev.logprob());
          }
        }
        steps++;
      }
      cacheHits = e.stats().cacheHitTokens();
    }
    return out;
  }

  @ParameterizedTest
  @ValueSource(strings = {"llama3-tiny", "qwen2-tiny", "qwen3-tiny", "phi3-tiny"})
  void batchedChunkedAndCachedIsBitIdenticalToAlone(String name) {
    LlamaModel model =
        GgufModelLoader.load(SharedFiles.root().resolve("models/zoo/" + name + ".gguf"));
    List<Req> reqs = requests(model);
    EngineConfig together =
        EngineConfig.builder()
            .maxRunningRequests(8)
            .maxTotalTokens(4096)
            .chunkedPrefillSize(16)
            .threads(2)
            .build();
    Map<String, Result> batched = serve(model, together, reqs);
    assertThat(cacheHits).as("the late requests found the shared prefix cached").isPositive();
    EngineConfig solo =
        EngineConfig.builder()
            .maxRunningRequests(1)
            .maxTotalTokens(4096)
            .radixCache(false)
            .threads(1)
            .build();
    for (Req r : requests(model)) { // fresh requests: a served one carries its progress
      Result alone = serve(model, solo, List.of(r)).get(r.id());
      assertThat(batched.get(r.id()).tokens).as(name + " " + r.id()).isEqualTo(alone.tokens);
      assertThat(batched.get(r.id()).logprobs).as(name + " " + r.id()).isEqualTo(alone.logprobs);
    }
  }
}
