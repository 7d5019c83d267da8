package io.flinfer.runtime.testing;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinfer.memcache.ReqToTokenPool;
import io.flinfer.runtime.forward.ForwardBatch;
import io.flinfer.runtime.forward.Logits;
import io.flinfer.runtime.forward.ModelRunner;
import io.flinfer.runtime.forward.ModelRunnerFactory;
import io.flinfer.runtime.forward.ReferenceForward;
import io.flinfer.runtime.model.LlamaModel;
import io.flinfer.runtime.model.ModelConfig;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;

/** Runs sequences through a backend alone and in mixed batches, collecting every step's logits. */
public final class ForwardRuns {
  private ForwardRuns() {}

  /**
   * The determinism rule on the CPU backend: {@code n} random sequences of tokens below {@code
   * vocab}, run in mixed batches and chunked, each get the bits they get alone.
   */
  public static void assertMixedAndChunkedGiveAloneBits(
      LlamaModel model, Random rnd, int n, int vocab, ModelRunnerFactory backend) {
    int[][] tokens = new int[n][];
    int[] promptLen = new int[n];
    for (int s = 0; s < n; s++) {
      tokens[s] = rnd.ints(10 + rnd.nextInt(30), 3, vocab).toArray();
      promptLen[s] = 2 + rnd.nextInt(tokens[s].length - 4);
    }
    List<List<float[]>> batched = mixed(model, tokens, promptLen, rnd, backend, 2);
    for (int s = 0; s < n; s++) {
      List<float[]> alone = alone(model, tokens[s], promptLen[s], backend, 1);
      List<float[]> inChunks = chunked(model, tokens[s], promptLen[s], 3, backend, 2);
      assertThat(batched.get(s)).hasSameSizeAs(alone);
      for (int i = 0; i < alone.size(); i++) {
        assertThat(batched.get(s).get(i))
            .as("sequence %d, step %d, batched", s, i)
            .containsExactly(alone.get(i));
        assertThat(inChunks.get(i))
            .as("sequence %d, step %d, chunked", s, i)
            .containsExactly(alone.get(i));
      }
    }
  }

  /**
   * The CPU backend's logits within {@code tolerance} (max_rel) of the scalar reference's: the
   * prompt of {@code promptLen} tokens in one extend, then decode steps.
   */
  public static void assertAgreesWithTheReference(
      LlamaModel model, int[] tokens, int promptLen, ModelRunnerFactory backend, double tolerance) {
    List<float[]> fast = alone(model, tokens, promptLen, backend, 2);
    ReferenceForward ref = new ReferenceForward(model);
    List<float[]> expected = new ArrayList<>();
    for (int i = 0; i < tokens.length; i++) {
      float[] logits = ref.next(tokens[i]);
      if (i >= promptLen - 1) {
        expected.add(logits);
      }
    }
    assertThat(fast).hasSameSizeAs(expected);
    for (int i = 0; i < fast.size(); i++) {
      assertThat(ZooGoldens.maxRel(expected.get(i), fast.get(i)))
          .as("position %d", promptLen - 1 + i)
          .isLessThan(tolerance);
    }
  }

  /** Prompt in one extend, then one decode step per remaining token; logits of every step. */
  public static List<float[]> alone(
      LlamaModel model, int[] tokens, int promptLen, ModelRunnerFactory backend, int threads) {
    return chunked(model, tokens, promptLen, promptLen, backend, threads);
  }

  /**
   * The prompt in extends of at most {@code chunk} tokens, then one decode step per remaining
   * token; the logits of the prompt's last extend and of every decode step.
   */
  public static List<float[]> chunked(
      LlamaModel model,
      int[] tokens,
      int promptLen,
      int chunk,
      ModelRunnerFactory backend,
      int threads) {
    ModelConfig c = model.config();
    int ctx = Math.max(512, tokens.length);
    ReqToTokenPool reqToToken = new ReqToTokenPool(1, ctx);
    List<float[]> out = new ArrayList<>();
    try (ModelRunner runner = backend.createWithKv(model, reqToToken, threads, ctx)) {
      ForwardBatch batch = new ForwardBatch();
      int[] slots = new int[tokens.length];
      for (int i = 0; i < slots.length; i++) {
        slots[i] = i + 1;
      }
      reqToToken.write(0, 0, slots);
      int pos = 0;
      Logits logits = new Logits(c.vocabSize());
      while (pos < tokens.length) {
        int len = pos < promptLen ? Math.min(chunk, promptLen - pos) : 1;
        batch.reset().add(0, pos, tokens, pos, len, slots, pos);
        runner.forward(batch, logits);
        if (pos + len >= promptLen) {
          out.add(logits.row(0));
        }
        pos += len;
      }
    }
    return out;
  }

  /**
   * Sequences start at staggered steps, prompts are prefilled in two chunks where possible, and KV
   * slots are drawn shuffled from a shared pool, so steps mix extends and decodes.
   */
  public static List<List<float[]>> mixed(
      LlamaModel model,
      int[][] tokens,
      int[] promptLen,
      Random rnd,
      ModelRunnerFactory backend,
      int threads) {
    ModelConfig c = model.config();
    int n = tokens.length;
    int poolSize = 0;
    int ctx = 512;
    for (int[] t : tokens) {
      poolSize += t.length;
      ctx = Math.max(ctx, t.length);
    }
    poolSize = Math.max(2048, poolSize);
    ReqToTokenPool reqToToken = new ReqToTokenPool(n, ctx);
    List<Integer> free = new ArrayList<>();
    for (int i = 1; i <= poolSize; i++) {
      free.add(i);
    }
    Collections.shuffle(free, rnd);
    int[][] slots = new int[n][];
    int next = 0;
    for (int s = 0; s < n; s++) {
      slots[s] = new int[tokens[s].length];
      for (int i = 0; i < slots[s].length; i++) {
        slots[s][i] = free.get(next++);
      }
      reqToToken.write(n - 1 - s, 0, slots[s]);
    }
    List<List<float[]>> out = new ArrayList<>();
    for (int s = 0; s < n; s++) {
      out.add(new ArrayList<>());
    }
    int[] pos = new int[n];
    int firstChunk[] = new int[n];
    for (int s = 0; s < n; s++) {
      firstChunk[s] = promptLen[s] >= 4 ? promptLen[s] / 2 : promptLen[s];
    }
    try (ModelRunner runner = backend.createWithKv(model, reqToToken, threads, poolSize)) {
      ForwardBatch batch = new ForwardBatch();
      Logits logits = new Logits(c.vocabSize());
      int[] member = new int[n];
      for (int step = 0; ; step++) {
        batch.reset();
        int members = 0;
        for (int s = n - 1; s >= 0; s--) {
          if (step < s || pos[s] >= tokens[s].length) {
            continue;
          }
          int len = pos[s] == 0 ? firstChunk[s] : pos[s] < promptLen[s] ? promptLen[s] - pos[s] : 1;
          batch.add(n - 1 - s, pos[s], tokens[s], pos[s], len, slots[s], pos[s]);
          member[members++] = s;
        }
        if (members == 0) {
          break;
        }
        runner.forward(batch, logits);
        for (int b = 0; b < members; b++) {
          int s = member[b];
          pos[s] += batch.extendLen(b);
          if (pos[s] >= promptLen[s]) {
            out.get(s).add(logits.row(b));
          }
        }
      }
    }
    return out;
  }

  /**
   * Sequences whose first {@code prefixLen} tokens are the same, held once at the same slots (as
   * the radix cache shares them): the prefix is prefilled once, then every sequence extends its own
   * prompt, then all decode together. Logits of every step after each prompt.
   */
  public static List<List<float[]>> sharedPrefix(
      LlamaModel model,
      int prefixLen,
      int[][] tokens,
      int[] promptLen,
      ModelRunnerFactory backend,
      int threads) {
    ModelConfig c = model.config();
    int n = tokens.length;
    ReqToTokenPool reqToToken = new ReqToTokenPool(n, 512);
    int[][] slots = new int[n][];
    int next = prefixLen + 1;
    for (int s = 0; s < n; s++) {
      slots[s] = new int[tokens[s].length];
      for (int i = 0; i < slots[s].length; i++) {
        slots[s][i] = i < prefixLen ? i + 1 : next++;
      }
      reqToToken.write(s, 0, slots[s]);
    }
    List<List<float[]>> out = new ArrayList<>();
    try (ModelRunner runner = backend.createWithKv(model, reqToToken, threads, 2048)) {
      ForwardBatch batch = new ForwardBatch();
      Logits logits = new Logits(c.vocabSize());
      runner.forward(batch.reset().add(0, 0, tokens[0], 0, prefixLen, slots[0], 0), logits);
      int[] pos = new int[n];
      batch.reset();
      for (int s = 0; s < n; s++) {
        out.add(new ArrayList<>());
        batch.add(
            s, prefixLen, tokens[s], prefixLen, promptLen[s] - prefixLen, slots[s], prefixLen);
        pos[s] = promptLen[s];
      }
      while (true) {
        runner.forward(batch, logits);
        int[] member = new int[n];
        int members = 0;
        for (int b = 0; b < batch.batchSize(); b++) {
          int s = batch.reqPoolIdx(b);
          out.get(s).add(logits.row(b));
          if (pos[s] < tokens[s].length) {
            member[members++] = s;
          }
        }
        if (members == 0) {
          break;
        }
        batch.reset();
        for (int m = 0; m < members; m++) {
          int s = member[m];
          batch.add(s, pos[s], tokens[s], pos[s], 1, slots[s], pos[s]);
          pos[s]++;
        }
      }
    }
    return out;
  }

  /**
   * Every sequence's prompt in one extend, then all decode together, one token each per step, while
   * any has tokens left: the logits of each sequence's prompt and of each of its decodes.
   */
  public static List<List<float[]>> lockstep(
      LlamaModel model, int[][] tokens, int[] promptLen, ModelRunnerFactory backend, int threads) {
    ModelConfig c = model.config();
    int n = tokens.length;
    int ctx = 0;
    for (int[] t : tokens) {
      ctx = Math.max(ctx, t.length);
    }
    ReqToTokenPool reqToToken = new ReqToTokenPool(n, ctx);
    int[][] slots = new int[n][];
    int next = 1;
    for (int s = 0; s < n; s++) {
      slots[s] = new int[tokens[s].length];
      for (int i = 0; i < slots[s].length; i++) {
        slots[s][i] = next++;
      }
      reqToToken.write(s, 0, slots[s]);
    }
    List<List<float[]>> out = new ArrayList<>();
    try (ModelRunner runner = backend.createWithKv(model, reqToToken, threads, next)) {
      ForwardBatch batch = new ForwardBatch();
      Logits logits = new Logits(c.vocabSize());
      int[] pos = new int[n];
      for (int s = 0; s < n; s++) {
        out.add(new ArrayList<>());
        batch.add(s, 0, tokens[s], 0, promptLen[s], slots[s], 0);
        pos[s] = promptLen[s];
      }
      while (batch.batchSize() > 0) {
        runner.forward(batch, logits);
        for (int b = 0; b < batch.batchSize(); b++) {
          out.get(batch.reqPoolIdx(b)).add(logits.row(b));
        }
        batch.reset();
        for (int s = 0; s < n; s++) {
          if (pos[s] < tokens[s].length) {
            batch.add(s, pos[s], tokens[s], pos[s], 1, slots[s], pos[s]);
            pos[s]++;
          }
        }
      }
    }
    return out;
  }
}
