package io.flinfer.job.eval;

import io.flinfer.operators.engine.Engine;
import io.flinfer.operators.engine.EngineConfig;
import io.flinfer.operators.engine.PromptLogprobs;
import io.flinfer.operators.engine.Req;
import io.flinfer.operators.engine.TokenEvent;
import io.flinfer.runtime.model.LlamaModel;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A model's perplexity on a text, measured as llama.cpp's {@code llama-perplexity} measures it: the
 * tokens cut into windows of {@code ctx} tokens (the rest dropped), each window's first token made
 * BOS where the tokenizer adds one, and each window's second half scored, every token given all the
 * window's tokens before it. The windows are prompts with prompt log-probabilities, batched by the
 * continuous-batching engine.
 */
public final class Perplexity {

  /**
   * @param windows windows scored
   * @param scored tokens scored (ctx - 1 - ctx / 2 a window)
   * @param running the perplexity after each window, in order (llama.cpp's {@code [i]ppl} line)
   * @param ppl the final estimate, exp of the mean negative log-likelihood
   * @param plusMinus its standard error, as llama.cpp computes it
   * @param seconds time spent in the engine
   */
  public record Result(
      int windows, int scored, double[] running, double ppl, double plusMinus, double seconds) {}

  private Perplexity() {}

  /**
   * Measures on {@code tokens} (the text's, as the tokenizer encodes it with its BOS) in windows of
   * {@code ctx}, at most {@code maxWindows} of them (all when below 1).
   */
  public static Result measure(
      LlamaModel model, int[] tokens, int ctx, int maxWindows, EngineConfig config) {
    if (ctx < 4 || ctx > model.config().contextLength()) {
      throw new IllegalArgumentException(
          "the window must hold 4 to " + model.config().contextLength() + " tokens, got " + ctx);
    }
    int windows = tokens.length / ctx;
    if (maxWindows > 0) {
      windows = Math.min(windows, maxWindows);
    }
    if (tokens.length < 2 * ctx) {
      throw new IllegalArgumentException(
          "the text has "
              + tokens.length
              + " tokens; a window of "
              + ctx
              + " needs at least "
              + 2 * ctx);
    }
    boolean bos = model.tokenizer().addBos();
    List<Req> reqs = new ArrayList<>();
    for (int w = 0; w < windows; w++) {
      int[] window = Arrays.copyOfRange(tokens, w * ctx, (w + 1) * ctx);
      if (bos) {
        window[0] = model.tokenizer().bosId();
      }
      reqs.add(
          Req.builder(Integer.toString(w), window)
              .promptLogprobs(0)
              .promptLogprobsStart(ctx / 2)
              .maxNewTokens(1)
              .ignoreEos(true)
              .build());
    }
    PromptLogprobs[] scores = new PromptLogprobs[windows];
    long start = System.nanoTime();
    try (Engine engine = Engine.create(model, config)) {
      int next = 0;
      while (next < reqs.size() || engine.hasWork()) {
        while (next < reqs.size() && engine.submit(reqs.get(next))) {
          next++;
        }
        for (TokenEvent e : engine.step()) {
          if (e.promptLogprobs() != null) {
            scores[Integer.parseInt(e.requestId())] = e.promptLogprobs();
          } else if (e.isLast() && e.index() < 0) {
            throw new IllegalStateException("window " + e.requestId() + ": " + e.finish());
          }
        }
      }
    }
    double seconds = (System.nanoTime() - start) / 1e9;
    // Summed in window order whatever order they finished in: the figures do not depend on it.
    int first = ctx / 2;
    double nll = 0;
    double nll2 = 0;
    int count = 0;
    double[] running = new double[windows];
    for (int w = 0; w < windows; w++) {
      // lp[j - first]: window token j + 1 given the tokens before it
      float[] lp = scores[w].logprobs();
      for (int j = first; j < ctx - 1; j++) {
        double v = -lp[j - first];
        nll += v;
        nll2 += v * v;
        count++;
      }
      running[w] = Math.exp(nll / count);
    }
    double mean = nll / count;
    double var = nll2 / count - mean * mean;
    double ppl = Math.exp(mean);
    double plusMinus = var > 0 && count > 1 ? Math.sqrt(var / (count - 1)) * ppl : 0;
    return new Result(windows, count, running, ppl, plusMinus, seconds);
  }
}
