package io.flinfer.runtime.sampling;

import io.flinfer.runtime.forward.ForwardBatch;
import io.flinfer.runtime.forward.Logits;
import io.flinfer.runtime.grammar.ResponseFormat;
import io.flinfer.runtime.kernel.FastExp;
import java.util.Arrays;

/**
 * Picks the next token of a request from its logits. Owns scratch arrays sized to the vocabulary,
 * so sampling allocates nothing per token; one sampler serves a whole batch, one request at a time.
 *
 * <p>The reported log-probability is that of the chosen token under the model's distribution after
 * penalties and logit biases and before temperature and truncation. A request that asks for {@link
 * SamplingParams#topLogprobs} alternatives also gets the most likely tokens of that same
 * distribution, most likely first (ties by token id). A request held to a format passes the tokens
 * that may come next as a mask: the others are out of every choice and every log-probability, as if
 * the model had given them none.
 */
public final class Sampler {

  private final int vocab;
  private final float[] work;
  private final float[] probs;
  private final int[] counts;
  private long[] packed;
  private float lastLogprob;
  private final int[] topIds = new int[SamplingParams.MAX_TOP_LOGPROBS];
  private final float[] topLogprobs = new float[SamplingParams.MAX_TOP_LOGPROBS];
  private int topCount;
  private int lastRank;

  public Sampler(int vocab) {
    this.vocab = vocab;
    this.work = new float[vocab];
    this.probs = new float[vocab];
    this.counts = new int[vocab];
    this.packed = new long[256];
  }

  /** The log-probability of the token the last {@link #sample} call chose. */
  public float lastLogprob() {
    return lastLogprob;
  }

  /**
   * The rank of the token the last {@link #score} call scored: 1 plus the number of tokens more
   * likely there (vLLM's rank).
   */
  public int lastRank() {
    return lastRank;
  }

  /** How many alternatives the last {@link #sample} call reported (its request's top_logprobs). */
  public int lastTopCount() {
    return topCount;
  }

  /** Alternative {@code i} of the last call (0: the most likely token). */
  public int lastTopId(int i) {
    return topIds[i];
  }

  /** Alternative {@code i}'s log-probability. */
  public float lastTopLogprob(int i) {
    return topLogprobs[i];
  }

  /**
   * Tells the step what the last request added to {@code batch} needs for its token number {@code
   * index}: its greedy choice only, or a draw the backend may make itself (no penalties: they read
   * the request's history), or else its full row.
   */
  public static void prepare(ForwardBatch batch, SamplingParams p, long index) {
    if (readsRow(p) || index < p.minTokens()) {
      return; // the row is needed (below min_tokens: to take the end tokens out)
    }
    if (p.isGreedy()) {
      batch.greedyOnly();
    } else {
      batch.drawOnBackend(
          p.temperature(), p.topK(), p.topP(), p.minP(), CounterRng.uniform(p.seed(), index));
    }
  }

  /**
   * Whether a request's token needs its whole row of logits on the host: penalties read its
   * history, and biases, alternatives and a format's mask are applied to it or read from it.
   */
  private static boolean readsRow(SamplingParams p) {
    return p.hasPenalties()
        || p.biasCount() > 0
        || p.topLogprobs() > 0
        || p.responseFormat() != ResponseFormat.TEXT;
  }

  /**
   * Chooses token number {@code index} of request {@code r} of a step's {@link Logits}: the token
   * the backend drew, or from its full row, or, where the step gave only the greedy summary, that
   * token. With {@code allowed} (bit {@code t % 64} of word {@code t / 64}; null: all), only among
   * the tokens set there, of which there must be at least one.
   */
  public int sample(
      Logits logits,
      int r,
      SamplingParams p,
      int[] history,
      int promptLen,
      int historyLen,
      long index,
      long[] allowed) {
    topCount = 0;
    if (logits.isDrawn(r)) {
      lastLogprob = logits.drawnLogprob(r);
      return logits.drawnToken(r);
    }
    if (logits.isFull(r)) {
      return sample(logits.rows(), r * vocab, p, history, promptLen, historyLen, index, allowed);
    }
    if (!p.isGreedy() || readsRow(p) || allowed != null) {
      throw new IllegalStateException("request " + r + " needs its full row of logits");
    }
    lastLogprob = logits.maxLogit(r) - logits.logZ(r);
    return logits.argmax(r);
  }

  /**
   * Chooses token number {@code index} of a request, among the tokens set in {@code allowed} (null:
   * all).
   *
   * @param logits the request's logits at {@code logits[off .. off + vocab)}, left unchanged
   * @param history the request's prompt then output tokens, {@code history[0 .. historyLen)}
   * @param promptLen how many of them are prompt
   */
  public int sample(
      float[] logits,
      int off,
      SamplingParams p,
      int[] history,
      int promptLen,
      int historyLen,
      long index,
      long[] allowed) {
    float[] l = work;
    System.arraycopy(logits, off, l, 0, vocab);
    if (p.hasPenalties()) {
      applyPenalties(l, p, history, promptLen, historyLen);
    }
    for (int i = 0; i < p.biasCount(); i++) {
      int t = p.biasedToken(i);
      if (t < vocab) {
        l[t] += p.bias(i);
      }
    }
    if (allowed != null) {
      mask(l, allowed);
    }
    float max = Float.NEGATIVE_INFINITY;
    int argmax = 0;
    for (int i = 0; i < vocab; i++) {
      if (l[i] > max) {
        max = l[i];
        argmax = i;
      }
    }
    if (max == Float.NEGATIVE_INFINITY) {
      throw new IllegalArgumentException("no token is allowed");
    }
    double sum = sumExp(l, max, 1f, null);
    float logZ = max + (float) Math.log(sum);
    int token =
        p.isGreedy()
            ? argmax
            : sampleTruncated(l, max, p, CounterRng.uniform(p.seed(), index), allowed != null);
    lastLogprob = l[token] - logZ;
    topCount = 0;
    if (p.topLogprobs() > 0) {
      top(l, 0, Math.min(p.topLogprobs(), vocab), logZ);
    }
    return token;
  }

  /**
   * Reads token {@code target}'s log-probability from a row of logits as the model gives them (no
   * penalties, biases or mask), and with {@code k > 0} the {@code k} most likely tokens there
   * ({@link #lastTopCount}): prompt log-probabilities. The arithmetic is {@link #sample}'s, so a
   * prompt token scores exactly what it scored when a greedy request without penalties generated
   * it.
   *
   * @param logits the row at {@code logits[off .. off + vocab)}, left unchanged
   */
  public float score(float[] logits, int off, int target, int k) {
    if (target < 0 || target >= vocab || k < 0 || k > SamplingParams.MAX_TOP_LOGPROBS) {
      throw new IllegalArgumentException("score token " + target + " with " + k + " alternatives");
    }
    // Read in place: nothing changes the row, so no copy is needed.
    float max = Float.NEGATIVE_INFINITY;
    float scored = logits[off + target];
    int above = 0;
    for (int i = off; i < off + vocab; i++) {
      if (logits[i] > max) {
        max = logits[i];
      }
      if (logits[i] > scored) {
        above++;
      }
    }
    lastRank = above + 1;
    double sum = FastExp.expSum(logits, off, off + vocab, max, 1f, null, 0);
    float logZ = max + (float) Math.log(sum);
    lastLogprob = logits[off + target] - logZ;
    topCount = 0;
    if (k > 0) {
      top(logits, off, Math.min(k, vocab), logZ);
    }
    return lastLogprob;
  }

  /**
   * The {@code k} largest of {@code l[off .. off + vocab)} (ties: the lower id first) as
   * log-probabilities: one pass, each value inserted into the short sorted list it beats.
   */
  private void top(float[] l, int off, int k, float logZ) {
    int n = 0;
    for (int i = 0; i < vocab; i++) {
      float v = l[off + i];
      if (n == k && !(v > topLogprobs[k - 1]) || v == Float.NEGATIVE_INFINITY) {
        continue;
      }
      int at = n < k ? n++ : k - 1;
      while (at > 0 && v > topLogprobs[at - 1]) {
        topLogprobs[at] = topLogprobs[at - 1];
        topIds[at] = topIds[at - 1];
        at--;
      }
      topLogprobs[at] = v;
      topIds[at] = i;
    }
    for (int i = 0; i < n; i++) {
      topLogprobs[i] -= logZ;
    }
    topCount = n;
  }

  /**
   * Logits of the tokens not set in {@code allowed} become -infinity. A word at a time: masks are
   * mostly all set (inside a string) or mostly clear (between values).
   */
  private void mask(float[] l, long[] allowed) {
    for (int w = 0, base = 0; base < vocab; w++, base += 64) {
      long word = allowed[w];
      int end = Math.min(base + 64, vocab);
      if (word == 0) {
        Arrays.fill(l, base, end, Float.NEGATIVE_INFINITY);
      } else if (word != -1L) {
        for (long off = ~word; off != 0; off &= off - 1) {
          int i = base + Long.numberOfTrailingZeros(off);
          if (i < end) {
            l[i] = Float.NEGATIVE_INFINITY;
          }
        }
      }
    }
  }

  private void applyPenalties(
      float[] l, SamplingParams p, int[] history, int promptLen, int historyLen) {
    for (int i = promptLen; i < historyLen; i++) {
      counts[history[i]]++;
    }
    float rp = p.repetitionPenalty();
    for (int i = 0; i < historyLen; i++) {
      int t = history[i];
      if (counts[t] >= 0) {
        int c = counts[t];
        float v = l[t];
        if (rp != 1f) {
          v = v > 0 ? v / rp : v * rp;
        }
        v -= p.frequencyPenalty() * c + (c > 0 ? p.presencePenalty() : 0f);
        l[t] = v;
        counts[t] = -1; // penalized once
      }
    }
    for (int i = 0; i < historyLen; i++) {
      counts[history[i]] = 0;
    }
  }

  /**
   * Temperature, then min-p, top-k and top-p over the tempered distribution. The logits {@code l}
   * stay as they are: the reported log-probability is read from them afterwards.
   */
  private int sampleTruncated(
      float[] logitsIn, float max, SamplingParams p, float u, boolean masked) {
    float invT = 1f / p.temperature();
    float[] l = probs;
    // Unnormalized probabilities, the largest being 1.
    double total = sumExp(logitsIn, max, invT, l);
    if (masked) {
      // The exponential's lower clamp leaves masked tokens a tiny weight: none at all instead.
      for (int i = 0; i < vocab; i++) {
        if (logitsIn[i] == Float.NEGATIVE_INFINITY) {
          total -= l[i];
          l[i] = 0f;
        }
      }
    }
    boolean truncate = p.topK() > 0 && p.topK() < vocab || p.topP() < 1f || p.minP() > 0f;
    if (!truncate) {
      return walk(l, total * u);
    }
    // Tokens below the cutoff can be in neither the min-p set nor the nucleus.
    float cutoff = p.minP();
    if (p.topP() < 1f && vocab > 1) {
      cutoff = Math.max(cutoff, (float) ((1 - p.topP()) * total / (vocab - 1)));
    }
    int n = 0;
    for (int i = 0; i < vocab; i++) {
      if (l[i] >= cutoff && l[i] > 0f) {
        if (n == packed.length) {
          packed = Arrays.copyOf(packed, n * 2);
        }
        // Positive floats order like their bits: sort (probability, -index) pairs as longs.
        packed[n++] = ((long) Float.floatToRawIntBits(l[i]) << 32) | (0x7fffffffL - i);
      }
    }
    Arrays.sort(packed, 0, n);
    int keep = p.topK() > 0 ? Math.min(n, p.topK()) : n;
    double kept = 0;
    for (int j = 0; j < keep; j++) {
      kept += Float.intBitsToFloat((int) (packed[n - 1 - j] >>> 32));
    }
    if (p.topP() < 1f) {
      double cum = 0;
      int k = 0;
      while (k < keep) {
        cum += Float.intBitsToFloat((int) (packed[n - 1 - k] >>> 32));
        k++;
        if (cum >= p.topP() * kept) {
          break;
        }
      }
      keep = k;
      kept = cum;
    }
    double r = kept * u;
    double cum = 0;
    for (int j = 0; j < keep; j++) {
      long e = packed[n - 1 - j];
      cum += Float.intBitsToFloat((int) (e >>> 32));
      if (r < cum) {
        return (int) (0x7fffffffL - (e & 0xffffffffL));
      }
    }
    return (int) (0x7fffffffL - (packed[n - keep] & 0xffffffffL));
  }

  /** {@code sum_i exp((l[i] - max) * scale)}, writing the terms to {@code out} when given. */
  private double sumExp(float[] l, float max, float scale, float[] out) {
    return FastExp.expSum(l, 0, vocab, max, scale, out, 0);
  }

  private int walk(float[] probs, double r) {
    double cum = 0;
    for (int i = 0; i < vocab; i++) {
      cum += probs[i];
      if (r < cum) {
        return i;
      }
    }
    for (int i = vocab - 1; i >= 0; i--) {
      if (probs[i] > 0f) {
        return i;
      }
    }
    return vocab - 1;
  }
}
