package io.flinfer.operators.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinfer.memcache.ReqToTokenPool;
import io.flinfer.runtime.forward.CpuModelRunner;
import io.flinfer.runtime.forward.ForwardBatch;
import io.flinfer.runtime.forward.ForwardingModelRunner;
import io.flinfer.runtime.forward.Logits;
import io.flinfer.runtime.forward.ModelRunner;
import io.flinfer.runtime.model.LlamaModel;
import io.flinfer.runtime.sampling.SamplingParams;
import io.flinfer.runtime.testing.SharedFiles;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * Where a long-lived engine puts tokens, and what it evicts for them. While free memory lasts, a
 * decoding request's next token lies right after its previous one. Once the pool is full of cached
 * requests, every step evicts only what it lacks (plus the rest of the last leaf it had to take):
 * with page size 1 locality then yields to the cache, while pages keep it.
 */
class SlotPlacementTest {

  /** Counts, over decode steps, tokens whose slot follows their request's previous token's. */
  private static final class PlacementRecorder extends ForwardingModelRunner {
    private final ReqToTokenPool reqToToken;
    long decodeTokens;
    long adjacent;

    PlacementRecorder(ModelRunner runner, ReqToTokenPool reqToToken) {
      super(runner);
      this.reqToToken = reqToToken;
    }

    @Override
    public void forward(ForwardBatch batch, Logits logits) {
      if (batch.isDecode()) {
        for (int t = 0; t < batch.numTokens(); t++) {
          int row = batch.reqPoolIdx(batch.tokenRequest(t));
          int previous = reqToToken.get(row, batch.position(t) - 1);
          decodeTokens++;
          adjacent += batch.outCacheLoc(t) == previous + 1 ? 1 : 0;
        }
      }
      super.forward(batch, logits);
    }
  }

  /** Waves of 32 requests of up to 100 tokens on one engine with a pool of {@code poolTokens}. */
  private static PlacementRecorder serveWaves(
      LlamaModel model, int poolTokens, int pageSize, int waves, Consumer<Engine> afterStep) {
    List<PlacementRecorder> recorders = new ArrayList<>();
    EngineConfig config =
        EngineConfig.builder()
            .maxRunningRequests(16)
            .maxTotalTokens(poolTokens)
            .pageSize(pageSize)
            .mixedChunk(false)
            .threads(1)
            .build();
    try (Engine e =
        new Engine(
            model,
            config,
            (m, pool, threads) -> {
              PlacementRecorder r =
                  new PlacementRecorder(new CpuModelRunner(m, pool, threads), pool);
              recorders.add(r);
              return r;
            })) {
      Random rnd = new Random(5);
      for (int wave = 0; wave < waves; wave++) {
        List<Req> queue = new ArrayList<>();
        for (int i = 0; i < 32; i++) {
          int[] prompt = rnd.ints(16 + rnd.nextInt(24), 3, model.config().vocabSize()).toArray();
          prompt[0] = model.tokenizer().bosId();
          queue.add(
              Req.builder("w" + wave + "-" + i, prompt)
                  .params(SamplingParams.GREEDY)
                  .maxNewTokens(60)
                  .ignoreEos(true)
                  .build());
        }
        while (!queue.isEmpty() || e.hasWork()) {
          while (!queue.isEmpty() && e.submit(queue.get(0))) {
            queue.remove(0);
          }
          e.step();
          afterStep.accept(e);
        }
      }
      return recorders.get(0);
    }
  }

  @Test
  void whileThePoolHasRoomEachRequestsTokensLieSideBySide() {
    LlamaModel model = SharedFiles.stories260k();
    // 16 requests of at most 100 tokens never fill 8192 slots, but the cache keeps growing.
    PlacementRecorder r = serveWaves(model, 8192, 1, 3, e -> {});
    assertThat(r.decodeTokens).isPositive();
    // A run breaks only where it reaches a group another request started: about once per 16.
    assertThat((double) r.adjacent / r.decodeTokens).isGreaterThan(0.85);
  }

  @Test
  void aFullPoolEvictsOnlyWhatEachStepLacks() {
    LlamaModel model = SharedFiles.stories260k();
    long[] evicting = {0};
    serveWaves(
        model,
        2048,
        1,
        5,
        e -> {
          int[] ev = e.lastStepEviction();
          if (ev[0] > 0) {
            evicting[0]++;
            // Whole leaves go: only the last one may reach past the shortfall.
            assertThat(ev[2]).isNotPositive();
            assertThat(ev[1]).isPositive();
          }
          e.verifyInvariants();
        });
    assertThat(evicting[0]).as("steps that had to evict").isPositive();
  }

  @Test
  void pagesKeepTokensSideBySideInAFullPool() {
    LlamaModel model = SharedFiles.stories260k();
    // The pool cycles several times; a page's slots belong to one request, so only page ends
    // break a run, whatever the eviction order.
    PlacementRecorder r = serveWaves(model, 2048, 16, 5, Engine::verifyInvariants);
    assertThat((double) r.adjacent / r.decodeTokens).isGreaterThan(0.9);
  }
}
