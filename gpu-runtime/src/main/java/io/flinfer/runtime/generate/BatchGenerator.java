package io.flinfer.runtime.generate;

import io.flinfer.memcache.ReqToTokenPool;
import io.flinfer.memcache.SimpleTokenToKvPoolAllocator;
import io.flinfer.memcache.TokenToKvPoolAllocator;
import io.flinfer.runtime.forward.CpuModelRunner;
import io.flinfer.runtime.forward.ForwardBatch;
import io.flinfer.runtime.forward.Logits;
import io.flinfer.runtime.forward.ModelRunner;
import io.flinfer.runtime.forward.ModelRunnerFactory;
import io.flinfer.runtime.grammar.OutputConstraint;
import io.flinfer.runtime.grammar.ThoughtBudget;
import io.flinfer.runtime.model.LlamaModel;
import io.flinfer.runtime.sampling.Sampler;
import io.flinfer.runtime.sampling.TokenMasks;
import java.util.List;

/**
 * Runs a fixed set of sequences to completion: one prefill (extend) step over all prompts, then
 * decode steps over those still running. Owns its KV pools and backend. The continuous-batching
 * engine in {@code operators} is the serving path; this is the path of the {@code generate}
 * command, benchmarks and tests.
 */
public final class BatchGenerator implements AutoCloseable {
  private final LlamaModel model;
  private final ReqToTokenPool reqToToken;
  private final TokenToKvPoolAllocator allocator;
  private final ModelRunner runner;
  private final Sampler sampler;
  private final ForwardBatch batch = new ForwardBatch();
  private final Logits logits;
  private final int[] endTokens;
  private final TokenMasks masks;
  private static final int[] NONE = {};

  public BatchGenerator(LlamaModel model, int maxBatch, int maxContext, int threads) {
    this(model, maxBatch, maxContext, threads, CpuModelRunner::new);
  }

  public BatchGenerator(
      LlamaModel model, int maxBatch, int maxContext, int threads, ModelRunnerFactory backend) {
    this.model = model;
    int ctx = Math.min(maxContext, model.config().contextLength());
    this.reqToToken = new ReqToTokenPool(maxBatch, ctx);
    this.allocator = new SimpleTokenToKvPoolAllocator(maxBatch * ctx);
    this.runner = backend.createWithKv(model, reqToToken, threads, maxBatch * ctx);
    this.sampler = new Sampler(model.config().vocabSize());
    this.logits = new Logits(model.config().vocabSize());
    this.endTokens = model.tokenizer().endTokens();
    this.masks = new TokenMasks(model.tokenizer(), model.config().vocabSize());
  }

  public int maxContext() {
    return reqToToken.maxContextLen();
  }

  /** Generates every request; returns each one's new tokens. */
  public int[][] generate(List<GenerationRequest> requests, TokenListener listener) {
    int n = requests.size();
    if (n > reqToToken.availableSize()) {
      throw new IllegalArgumentException(
          n + " requests exceed the batch limit " + reqToToken.availableSize());
    }
    int[] slot = new int[n];
    int[][] history = new int[n][];
    int[] len = new int[n];
    int[] produced = new int[n];
    boolean[] done = new boolean[n];
    int[][] kvSlots = new int[n][];
    OutputConstraint[] constraints = new OutputConstraint[n];
    ThoughtBudget[] budgets = new ThoughtBudget[n];
    for (int r = 0; r < n; r++) {
      constraints[r] = masks.constraint(requests.get(r).params());
      budgets[r] = masks.budget(requests.get(r).params());
    }
    try {
      batch.reset();
      for (int r = 0; r < n; r++) {
        GenerationRequest q = requests.get(r);
        int promptLen = q.promptIds().length;
        if (promptLen >= maxContext()) {
          throw new IllegalArgumentException(
              "prompt of " + promptLen + " tokens does not fit the context of " + maxContext());
        }
        slot[r] = reqToToken.allocOne();
        history[r] = new int[Math.min(maxContext(), promptLen + q.maxNewTokens())];
        System.arraycopy(q.promptIds(), 0, history[r], 0, promptLen);
        len[r] = promptLen;
        kvSlots[r] = new int[history[r].length];
        int[] loc = allocator.alloc(promptLen);
        System.arraycopy(loc, 0, kvSlots[r], 0, promptLen);
        reqToToken.write(slot[r], 0, loc);
        batch.add(slot[r], 0, q.promptIds(), 0, promptLen, loc, 0);
        Sampler.prepare(batch, q.params(), 0);
        done[r] = q.maxNewTokens() == 0;
      }
      int[] order = new int[n];
      int active = 0;
      for (int r = 0; r < n; r++) {
        order[active++] = r;
      }
      int[] one = new int[1];
      while (active > 0) {
        runner.forward(batch, logits);
        // Sample for every request in this step's batch order.
        int next = 0;
        for (int b = 0; b < active; b++) {
          int r = order[b];
          if (done[r]) {
            continue;
          }
          GenerationRequest q = requests.get(r);
          OutputConstraint c = constraints[r];
          long[] allowed =
              masks.allowed(
                  q.params(), c, budgets[r], produced[r], q.stopAtEos() ? endTokens : NONE, NONE);
          if (allowed != null && TokenMasks.isEmpty(allowed)) {
            done[r] = true; // no token of the vocabulary continues the format
            continue;
          }
          int tok =
              sampler.sample(
                  logits,
                  b,
                  q.params(),
                  history[r],
                  q.promptIds().length,
                  len[r],
                  produced[r],
                  allowed);
          history[r][len[r]++] = tok;
          if (budgets[r] != null) {
            budgets[r].advance(tok);
          }
          listener.onToken(r, produced[r], tok, sampler.lastLogprob());
          produced[r]++;
          boolean eos = q.stopAtEos() && isEnd(tok);
          boolean closed = c != null && c.advance(tok) && c.isComplete();
          if (eos || closed || produced[r] >= q.maxNewTokens() || len[r] >= history[r].length) {
            done[r] = true;
          } else {
            order[next++] = r;
          }
        }
        active = next;
        batch.reset();
        for (int b = 0; b < active; b++) {
          int r = order[b];
          int[] loc = allocator.alloc(1);
          if (loc == null) {
            throw new IllegalStateException("KV pool exhausted");
          }
          kvSlots[r][len[r] - 1] = loc[0];
          reqToToken.write(slot[r], len[r] - 1, loc);
          one[0] = history[r][len[r] - 1];
          batch.add(slot[r], len[r] - 1, one, 0, 1, loc, 0);
          Sampler.prepare(batch, requests.get(r).params(), produced[r]);
        }
      }
      int[][] out = new int[n][];
      for (int r = 0; r < n; r++) {
        int promptLen = requests.get(r).promptIds().length;
        out[r] = java.util.Arrays.copyOfRange(history[r], promptLen, len[r]);
      }
      return out;
    } finally {
      for (int r = 0; r < n; r++) {
        if (kvSlots[r] != null) {
          // The last sampled token never had its K/V written, so it holds no slot.
          int held = len[r] - (produced[r] > 0 ? 1 : 0);
          allocator.free(kvSlots[r], 0, Math.min(held, countAllocated(kvSlots[r], held)));
          reqToToken.free(slot[r]);
        }
      }
    }
  }

  private boolean isEnd(int token) {
    for (int e : endTokens) {
      if (e == token) {
        return true;
      }
    }
    return false;
  }

  private static int countAllocated(int[] slots, int upTo) {
    int n = 0;
    while (n < upTo && slots[n] != 0) {
      n++;
    }
    return n;
  }

  @Override
  public void close() {
    runner.close();
  }
}
