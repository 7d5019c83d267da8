package io.flinfer.operators.flink;

import io.flinfer.operators.engine.PromptLogprobs;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Each request's generated tokens not yet sent downstream. A request's tokens leave together at
 * most once per stream interval, so a fast engine sends one record per request every few steps
 * instead of one per token; its first token and its end leave at once, so neither the time to first
 * token nor a completion waits. With an interval of zero every token leaves at once.
 *
 * <p>Owns which requests have been announced downstream: the first output of a request after it
 * entered the operator carries its prompt.
 */
final class PendingOutputs {
  private final long intervalMillis;
  private final Map<String, Pending> pending = new LinkedHashMap<>();
  private final Map<String, Boolean> announced = new HashMap<>();

  private static final class Pending {
    final TokenOutput out = new TokenOutput();
    int count;

    /** Alternatives per token (0: none asked for). */
    int top;

    long sinceMillis;
  }

  PendingOutputs(long intervalMillis) {
    if (intervalMillis < 0) {
      throw new IllegalArgumentException("stream interval must be >= 0 ms: " + intervalMillis);
    }
    this.intervalMillis = intervalMillis;
  }

  /**
   * Holds token {@code index} of a request, generated at {@code nowMillis}, with the most likely
   * tokens at its position ({@code topIds}, the same number for every token of the request).
   */
  void add(
      TokenizedPrompt prompt,
      int index,
      int tokenId,
      float logprob,
      int[] topIds,
      float[] topLogprobs,
      long nowMillis) {
    Pending p = pending(prompt, nowMillis);
    TokenOutput o = p.out;
    if (p.count == 0) {
      o.index = index;
    } else if (index != o.index + p.count) {
      throw new IllegalStateException(
          "token " + index + " of " + o.requestId + " after " + (o.index + p.count - 1));
    }
    if (p.count == o.tokenIds.length) {
      int grown = Math.max(4, 2 * p.count);
      o.tokenIds = Arrays.copyOf(o.tokenIds, grown);
      o.logprobs = Arrays.copyOf(o.logprobs, grown);
    }
    o.tokenIds[p.count] = tokenId;
    o.logprobs[p.count] = logprob;
    int k = topIds.length;
    if (k > 0) {
      if ((p.count + 1) * k > o.topIds.length) {
        o.topIds = Arrays.copyOf(o.topIds, o.tokenIds.length * k);
        o.topLogprobs = Arrays.copyOf(o.topLogprobs, o.tokenIds.length * k);
      }
      System.arraycopy(topIds, 0, o.topIds, p.count * k, k);
      System.arraycopy(topLogprobs, 0, o.topLogprobs, p.count * k, k);
      p.top = k;
    }
    p.count++;
  }

  /**
   * Puts the prompt's log-probabilities on the output holding token 0 (just {@linkplain #add
   * added}).
   */
  void promptLogprobs(String requestId, PromptLogprobs prompt) {
    TokenOutput o = pending.get(requestId).out;
    o.promptLogprobs = prompt.logprobs();
    o.promptRanks = prompt.ranks();
    o.promptTopIds = prompt.topIds();
    o.promptTopLogprobs = prompt.topLogprobs();
  }

  /** Puts the first token's times on the output holding it (just {@linkplain #add added}). */
  void timeFirstToken(String requestId, long queuedMillis, long engineFirstTokenMillis) {
    TokenOutput o = pending.get(requestId).out;
    o.queuedMillis = queuedMillis;
    o.engineFirstTokenMillis = engineFirstTokenMillis;
  }

  /**
   * The request's end: its held tokens and its finish, to send at once. The request is forgotten.
   */
  TokenOutput finish(
      TokenizedPrompt prompt, String type, String detail, int cachedTokens, long nowMillis) {
    Pending p = pending(prompt, nowMillis);
    pending.remove(prompt.request.getRequestId());
    announced.remove(prompt.request.getRequestId());
    p.out.finishType = type;
    p.out.finishDetail = detail;
    p.out.cachedTokens = cachedTokens;
    return trimmed(p);
  }

  /**
   * Takes the outputs due at {@code nowMillis} (all of them with {@code all}, before a checkpoint
   * barrier): those holding a request's first token, or held for a whole interval.
   */
  List<TokenOutput> takeDue(long nowMillis, boolean all) {
    List<TokenOutput> due = new ArrayList<>();
    for (Iterator<Pending> it = pending.values().iterator(); it.hasNext(); ) {
      Pending p = it.next();
      if (all || p.out.index == 0 || nowMillis - p.sinceMillis >= intervalMillis) {
        it.remove();
        due.add(trimmed(p));
      }
    }
    return due;
  }

  private Pending pending(TokenizedPrompt prompt, long nowMillis) {
    String id = prompt.request.getRequestId();
    Pending p = pending.get(id);
    if (p == null) {
      p = new Pending();
      p.out.requestId = id;
      p.sinceMillis = nowMillis;
      if (announced.putIfAbsent(id, Boolean.TRUE) == null) {
        p.out.prompt = prompt;
      }
      pending.put(id, p);
    }
    return p;
  }

  private static TokenOutput trimmed(Pending p) {
    TokenOutput o = p.out;
    o.tokenIds = Arrays.copyOf(o.tokenIds, p.count);
    o.logprobs = Arrays.copyOf(o.logprobs, p.count);
    o.topIds = Arrays.copyOf(o.topIds, p.count * p.top);
    o.topLogprobs = Arrays.copyOf(o.topLogprobs, p.count * p.top);
    if (p.count == 0) {
      o.index = -1;
    }
    return o;
  }
}
