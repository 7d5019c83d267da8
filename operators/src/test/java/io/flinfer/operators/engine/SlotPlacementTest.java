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
import org.junit.jupiter.api.Test;

/**
 * Where a long-lived engine puts tokens: once its pool is full of cached requests and slots come
 * back in eviction order, a decoding request's next token still lies right after its previous one,
 * because the engine evicts room for runs to start in whole free groups.
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

  @Test
  void aLongLivedEngineKeepsEachRequestsTokensSideBySide() {
    LlamaModel model = SharedFiles.stories260k();
    List<PlacementRecorder> recorders = new ArrayList<>();
    EngineConfig config =
        EngineConfig.builder()
            .maxRunningRequests(16)
            .maxTotalTokens(2048)
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
      // Six waves of 32 requests of up to 100 tokens: the pool fills with cached requests in the
      // first wave and is recycled in eviction order from then on.
      for (int wave = 0; wave < 6; wave++) {
        if (wave == 4) {
          recorders.get(0).decodeTokens = 0;
          recorders.get(0).adjacent = 0;
        }
        List<Req> reqs = new ArrayList<>();
        for (int i = 0; i < 32; i++) {
          int[] prompt = rnd.ints(16 + rnd.nextInt(24), 3, model.config().vocabSize()).toArray();
          prompt[0] = model.tokenizer().bosId();
          reqs.add(
              Req.builder("w" + wave + "-" + i, prompt)
                  .params(SamplingParams.GREEDY)
                  .maxNewTokens(60)
                  .ignoreEos(true)
                  .build());
        }
        EngineTest.runAll(e, reqs);
      }
      assertThat(e.stats().kvEvictableTokens())
          .as("the pool is full of cached requests")
          .isPositive();
      PlacementRecorder r = recorders.get(0);
      assertThat(r.decodeTokens).isPositive();
      // A run breaks only where it reaches a slot taken by another: about once per 16 tokens.
      assertThat((double) r.adjacent / r.decodeTokens)
          .as("decode tokens right after their request's previous token, last two waves")
          .isGreaterThan(0.85);
    }
  }
}
