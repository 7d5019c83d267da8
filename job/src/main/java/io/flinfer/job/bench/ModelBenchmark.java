package io.flinfer.job.bench;

import io.flinfer.memcache.KvStoreType;
import io.flinfer.memcache.ReqToTokenPool;
import io.flinfer.runtime.forward.ForwardBatch;
import io.flinfer.runtime.forward.Logits;
import io.flinfer.runtime.forward.ModelRunner;
import io.flinfer.runtime.forward.ModelRunnerFactory;
import io.flinfer.runtime.model.LlamaModel;
import io.flinfer.runtime.model.ModelConfig;
import io.flinfer.runtime.sampling.Sampler;
import io.flinfer.runtime.sampling.SamplingParams;
import java.util.Random;

/**
 * Measures a model's forward pass: decode tokens/s at a batch size and prefill tokens/s. Decoding
 * is greedy (the runner returns each request's top token, not its row of logits), or samples with
 * the given parameters, each sequence with its own seed (the backend draws where it can, else the
 * host from the row). Prompts are prefilled greedily. By default every sequence of a decode batch
 * has its own random prompt, prefilled untimed; with {@code sharedPrompt} they all read one
 * prompt's KV through their request-table rows (as prefix-cache hits would) and, being greedy,
 * decode the same tokens: llama.cpp's {@code -pps} case.
 */
public final class ModelBenchmark {
  /** Tokens/s and how they were measured. */
  public record Result(
      int batch,
      int tokens,
      double seconds,
      double tokensPerSecond,
      int contextAtEnd,
      double meanContext,
      boolean sharedPrompt,
      long weightBytesPerStep,
      int kvElementBytes) {}

  /** Tokens per extend step while prefilling the decode batches' prompts. */
  private static final int PREFILL_CHUNK = 2048;

  private final LlamaModel model;
  private final int threads;
  private final ModelRunnerFactory backend;
  private final KvStoreType kvType;
  private final SamplingParams sampling;

  /** {@code kvType}: the KV store type, or null for the backend's default. */
  public ModelBenchmark(
      LlamaModel model, int threads, ModelRunnerFactory backend, KvStoreType kvType) {
    this(model, threads, backend, kvType, SamplingParams.GREEDY);
  }

  /** {@code sampling}: how decode steps choose tokens (sequence r with seed + r). */
  public ModelBenchmark(
      LlamaModel model,
      int threads,
      ModelRunnerFactory backend,
      KvStoreType kvType,
      SamplingParams sampling) {
    this.model = model;
    this.threads = threads;
    this.backend = backend;
    this.kvType = kvType;
    this.sampling = sampling;
  }

  /**
   * Decodes {@code batch} requests in rounds, as llama.cpp's batched-bench does: each round
   * prefills the prompts (untimed), then times {@code steps} decode steps. Rounds repeat until
   * {@code minSeconds} of decoding were timed.
   */
  public Result decode(
      int batch, int promptLen, int steps, double minSeconds, boolean sharedPrompt) {
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
    int kvSize = sharedPrompt ? promptLen + batch * (steps + 1) : batch * ctx;
    int vocab = c.vocabSize();
    Logits logits = new Logits(vocab);
    Sampler sampler = new Sampler(vocab);
    int[][] history = new int[batch][ctx];
    int[][] slots = new int[batch][ctx];
    SamplingParams[] params = new SamplingParams[batch];
    for (int r = 0; r < batch; r++) {
      params[r] = sampling.toBuilder().seed(sampling.seed() + r).build();
    }
    ForwardBatch fb = new ForwardBatch();
    int[] one = new int[1];
    long timedNanos = 0;
    int tokens = 0;
    int round = 0;
    double contextSum = 0;
    long weightBytes;
    int kvBytes;
    try (ModelRunner runner = backend.createWithKv(model, reqToToken, threads, kvSize, kvType)) {
      weightBytes = runner.weightBytesPerStep();
      kvBytes = kvElementBytes(runner);
      while (timedNanos < minSeconds * 1e9 || round == 0) {
        prefill(
            runner,
            reqToToken,
            fb,
            logits,
            sampler,
            history,
            slots,
            promptLen,
            steps,
            round,
            sharedPrompt);
        int len = promptLen + 1;
        long start = System.nanoTime();
        for (int step = 0; step < steps; step++) {
          fb.reset();
          for (int r = 0; r < batch; r++) {
            one[0] = slots[r][len - 1];
            reqToToken.write(r, len - 1, one);
            fb.add(r, len - 1, history[r], len - 1, 1, one, 0);
            Sampler.prepare(fb, params[r], len - promptLen);
          }
          runner.forward(fb, logits);
          for (int r = 0; r < batch; r++) {
            history[r][len] =
                sampler.sample(
                    logits, r, params[r], history[r], promptLen, len, len - promptLen, null);
          }
          contextSum += len;
          len++;
        }
        timedNanos += System.nanoTime() - start;
        tokens += steps * batch;
        round++;
      }
    }
    double seconds = timedNanos / 1e9;
    return new Result(
        batch,
        tokens,
        seconds,
        tokens / seconds,
        ctx,
        contextSum / (steps * (double) round),
        sharedPrompt,
        weightBytes,
        kvBytes);
  }

  /**
   * Fills each request's prompt, slots and first token: one shared prompt prefilled once, or each
   * request's own, prefilled in extends of up to {@link #PREFILL_CHUNK} tokens.
   */
  private void prefill(
      ModelRunner runner,
      ReqToTokenPool reqToToken,
      ForwardBatch fb,
      Logits logits,
      Sampler sampler,
      int[][] history,
      int[][] slots,
      int promptLen,
      int steps,
      int round,
      boolean shared) {
    int batch = history.length;
    int vocab = model.config().vocabSize();
    Random rnd = new Random(17 + round);
    int next = 1;
    for (int r = 0; r < batch; r++) {
      if (!shared || r == 0) {
        for (int i = 0; i < promptLen; i++) {
          history[r][i] = 3 + rnd.nextInt(vocab - 3);
          slots[r][i] = next++;
        }
      } else {
        System.arraycopy(history[0], 0, history[r], 0, promptLen);
        System.arraycopy(slots[0], 0, slots[r], 0, promptLen);
      }
    }
    for (int r = 0; r < batch; r++) {
      for (int i = promptLen; i <= promptLen + steps; i++) {
        slots[r][i] = next++;
      }
      reqToToken.write(r, 0, slots[r], 0, promptLen);
    }
    int first = 0;
    int owners = shared ? 1 : batch;
    while (first < owners) {
      fb.reset();
      int count = 0;
      while (first + count < owners
          && (count + 1) * promptLen <= Math.max(promptLen, PREFILL_CHUNK)) {
        int r = first + count;
        fb.add(r, 0, history[r], 0, promptLen, slots[r], 0).greedyOnly();
        count++;
      }
      runner.forward(fb, logits);
      for (int i = 0; i < count; i++) {
        history[first + i][promptLen] =
            sampler.sample(
                logits,
                i,
                SamplingParams.GREEDY,
                history[first + i],
                promptLen,
                promptLen,
                0,
                null);
      }
      first += count;
    }
    for (int r = 1; shared && r < batch; r++) {
      history[r][promptLen] = history[0][promptLen];
    }
  }

  /** Prefills {@code requests} prompts of {@code promptLen} tokens in one extend step, timed. */
  public Result prefill(int requests, int promptLen, int repeats) {
    ModelConfig c = model.config();
    ReqToTokenPool reqToToken = new ReqToTokenPool(requests, promptLen);
    Logits logits = new Logits(c.vocabSize());
    try (ModelRunner runner =
        backend.createWithKv(model, reqToToken, threads, requests * promptLen, kvType)) {
      ForwardBatch fb = new ForwardBatch();
      Random rnd = new Random(5);
      for (int r = 0; r < requests; r++) {
        int[] slots = new int[promptLen];
        for (int i = 0; i < promptLen; i++) {
          slots[i] = 1 + r * promptLen + i;
        }
        reqToToken.write(r, 0, slots);
        fb.add(r, 0, rnd.ints(promptLen, 3, c.vocabSize()).toArray(), 0, promptLen, slots, 0)
            .greedyOnly();
      }
      runner.forward(fb, logits); // warm-up
      long start = System.nanoTime();
      for (int i = 0; i < repeats; i++) {
        runner.forward(fb, logits);
      }
      double seconds = (System.nanoTime() - start) / 1e9;
      int tokens = repeats * requests * promptLen;
      return new Result(
          requests,
          tokens,
          seconds,
          tokens / seconds,
          promptLen,
          (promptLen + 1) / 2.0,
          false,
          runner.weightBytesPerStep(),
          kvElementBytes(runner));
    }
  }

  /** Bytes of a KV value in the pool the runner was made with. */
  private int kvElementBytes(ModelRunner runner) {
    return (kvType != null ? kvType : runner.kvStoreTypes().get(0)).bytes();
  }

  /** Bytes a decode step reads at least: every weight once, and each request's K and V. */
  public static double decodeBytesPerStep(
      ModelConfig c, long weightBytes, int batch, double meanContext, int kvElementBytes) {
    double kv = (double) c.layers() * 2 * c.kvDim() * kvElementBytes * meanContext * batch;
    return weightBytes + kv;
  }

  /** Floating-point operations of a prefill token at a mean context, the classifier excluded. */
  public static double prefillFlopsPerToken(ModelConfig c, double meanContext) {
    double matrix =
        (double) c.dim() * (c.qDim() + 2.0 * c.kvDim())
            + (double) c.qDim() * c.dim()
            + 3.0 * c.dim() * c.hiddenDim();
    double attention = 4.0 * meanContext * c.qDim();
    return c.layers() * (2 * matrix + attention);
  }
}
