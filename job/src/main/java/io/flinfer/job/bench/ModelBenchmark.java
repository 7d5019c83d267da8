package io.flinfer.job.bench;

import io.flinfer.memcache.KvPool;
import io.flinfer.memcache.ReqToTokenPool;
import io.flinfer.runtime.forward.ForwardBatch;
import io.flinfer.runtime.forward.ModelRunner;
import io.flinfer.runtime.forward.ModelRunnerFactory;
import io.flinfer.runtime.model.LlamaModel;
import io.flinfer.runtime.model.ModelConfig;
import io.flinfer.runtime.sampling.Sampler;
import io.flinfer.runtime.sampling.SamplingParams;
import java.util.Random;

/**
 * Measures a model's forward pass: decode tokens/s at a batch size and prefill tokens/s. Every
 * request of a decode batch shares one prefilled prompt through its request-to-token row (as a
 * prefix-cache hit would), then decodes its own tokens, sampled with its own seed.
 */
public final class ModelBenchmark {
  /** Tokens/s and how they were measured. */
  public record Result(
      int batch, int tokens, double seconds, double tokensPerSecond, int contextAtEnd) {}

  private final LlamaModel model;
  private final int threads;
  private final ModelRunnerFactory backend;

  public ModelBenchmark(LlamaModel model, int threads, ModelRunnerFactory backend) {
    this.model = model;
    this.threads = threads;
    this.backend = backend;
  }

  /**
   * Decodes {@code batch} requests in rounds, as llama.cpp's batched-bench does: each round
   * prefills a shared {@code promptLen}-token prompt (untimed), then times {@code steps} decode
   * steps. Rounds repeat until {@code minSeconds} of decoding were timed.
   */
  public Result decode(int batch, int promptLen, int steps, double minSeconds) {
    ModelConfig c = model.config();
    if (promptLen + steps + 1 > c.contextLength()) {
      throw new IllegalArgumentException(
          "context "
              + c.contextLength()
              + " too short for "
              + promptLen
              + " + "
              + steps
              + " tokens");
    }
    int ctx = promptLen + steps + 1;
    ReqToTokenPool reqToToken = new ReqToTokenPool(batch, ctx);
    KvPool kv =
        new KvPool(promptLen + batch * (steps + 1), c.layers(), c.kvHeads(), c.headDim(), 1);
    int vocab = c.vocabSize();
    float[] logits = new float[batch * vocab];
    Sampler sampler = new Sampler(vocab);
    SamplingParams[] params = new SamplingParams[batch];
    int[][] history = new int[batch][ctx];
    int[] prompt = new Random(17).ints(promptLen, 3, vocab).toArray();
    int[] promptSlots = new int[promptLen];
    for (int i = 0; i < promptLen; i++) {
      promptSlots[i] = i + 1;
    }
    ForwardBatch fb = new ForwardBatch();
    float[] first = new float[vocab];
    int[] one = new int[1];
    long timedNanos = 0;
    int tokens = 0;
    int round = 0;
    try (ModelRunner runner = backend.create(model, kv, reqToToken, threads)) {
      while (timedNanos < minSeconds * 1e9 || round == 0) {
        fb.reset();
        reqToToken.write(0, 0, promptSlots);
        fb.add(0, 0, prompt, 0, promptLen, promptSlots, 0);
        runner.forward(fb, first);
        for (int r = 0; r < batch; r++) {
          reqToToken.write(r, 0, promptSlots);
          System.arraycopy(prompt, 0, history[r], 0, promptLen);
          params[r] = SamplingParams.builder().temperature(1f).seed(round * 100_003L + r).build();
          history[r][promptLen] =
              sampler.sample(first, 0, params[r], history[r], promptLen, promptLen, 0);
        }
        int nextSlot = promptLen + 1;
        int len = promptLen + 1;
        long start = System.nanoTime();
        for (int step = 0; step < steps; step++) {
          fb.reset();
          for (int r = 0; r < batch; r++) {
            one[0] = nextSlot++;
            reqToToken.write(r, len - 1, one);
            fb.add(r, len - 1, history[r], len - 1, 1, one, 0);
          }
          runner.forward(fb, logits);
          for (int r = 0; r < batch; r++) {
            history[r][len] =
                sampler.sample(
                    logits, r * vocab, params[r], history[r], promptLen, len, len - promptLen);
          }
          len++;
        }
        timedNanos += System.nanoTime() - start;
        tokens += steps * batch;
        round++;
      }
    }
    double seconds = timedNanos / 1e9;
    return new Result(batch, tokens, seconds, tokens / seconds, ctx);
  }

  /** Prefills {@code requests} prompts of {@code promptLen} tokens in one extend step, timed. */
  public Result prefill(int requests, int promptLen, int repeats) {
    ModelConfig c = model.config();
    ReqToTokenPool reqToToken = new ReqToTokenPool(requests, promptLen);
    KvPool kv = new KvPool(requests * promptLen, c.layers(), c.kvHeads(), c.headDim(), 1);
    float[] logits = new float[requests * c.vocabSize()];
    try (ModelRunner runner = backend.create(model, kv, reqToToken, threads)) {
      ForwardBatch fb = new ForwardBatch();
      Random rnd = new Random(5);
      for (int r = 0; r < requests; r++) {
        int[] slots = new int[promptLen];
        for (int i = 0; i < promptLen; i++) {
          slots[i] = 1 + r * promptLen + i;
        }
        reqToToken.write(r, 0, slots);
        fb.add(r, 0, rnd.ints(promptLen, 3, c.vocabSize()).toArray(), 0, promptLen, slots, 0);
      }
      runner.forward(fb, logits); // warm-up
      long start = System.nanoTime();
      for (int i = 0; i < repeats; i++) {
        runner.forward(fb, logits);
      }
      double seconds = (System.nanoTime() - start) / 1e9;
      int tokens = repeats * requests * promptLen;
      return new Result(requests, tokens, seconds, tokens / seconds, promptLen);
    }
  }
}
