package io.flinfer.operators.request;

import io.flinfer.avro.PromptRequest;
import io.flinfer.avro.SamplingOptions;
import io.flinfer.operators.engine.Req;
import io.flinfer.runtime.sampling.SamplingParams;
import io.flinfer.runtime.tokenizer.Tokenizer;
import java.util.List;
import java.util.Set;

/**
 * Turns a producer's {@link PromptRequest} into an engine request, or says exactly why it cannot be
 * served (the reason goes to the dead-letter topic). Owns the serving limits.
 *
 * <p>A request without a seed gets one derived from its id, so a replay or a restore after a
 * failure samples the same text.
 */
public final class RequestValidator {
  private final Tokenizer tokenizer;
  private final int contextLength;
  private final int maxNewTokensLimit;
  private final Set<String> tenants;

  /**
   * @param tenants tenants allowed, or empty to allow any
   */
  public RequestValidator(
      Tokenizer tokenizer, int contextLength, int maxNewTokensLimit, Set<String> tenants) {
    this.tokenizer = tokenizer;
    this.contextLength = contextLength;
    this.maxNewTokensLimit = maxNewTokensLimit;
    this.tenants = Set.copyOf(tenants);
  }

  /** The outcome: a request, or the reason there is none. */
  public record Outcome(ValidatedRequest request, String error) {
    public boolean ok() {
      return request != null;
    }
  }

  public Outcome validate(PromptRequest r, long nowMillis) {
    String id = r.getRequestId();
    if (id == null || id.isEmpty()) {
      return error("request_id is empty");
    }
    String tenant = r.getTenant() == null ? "" : r.getTenant();
    if (!tenants.isEmpty() && !tenants.contains(tenant)) {
      return error("unknown tenant '" + tenant + "'");
    }
    if (r.getDeadlineEpochMs() != null && r.getDeadlineEpochMs() <= nowMillis) {
      return error("deadline " + r.getDeadlineEpochMs() + " has passed");
    }
    boolean hasText = r.getPrompt() != null;
    boolean hasIds = r.getPromptTokenIds() != null;
    if (hasText == hasIds) {
      return error(
          hasText
              ? "give prompt or prompt_token_ids, not both"
              : "the prompt is missing (prompt or prompt_token_ids)");
    }
    int[] ids;
    if (hasText) {
      if (r.getPrompt().isEmpty()) {
        return error("the prompt is empty");
      }
      ids = tokenizer.encode(r.getPrompt(), tokenizer.addBos());
    } else {
      List<Integer> given = r.getPromptTokenIds();
      if (given.isEmpty()) {
        return error("prompt_token_ids is empty");
      }
      ids = new int[given.size()];
      for (int i = 0; i < ids.length; i++) {
        int t = given.get(i);
        if (t < 0 || t >= tokenizer.vocabSize()) {
          return error(
              "prompt token "
                  + t
                  + " at "
                  + i
                  + " is outside the vocabulary of "
                  + tokenizer.vocabSize());
        }
        ids[i] = t;
      }
    }
    if (ids.length >= contextLength) {
      return error("the prompt has " + ids.length + " tokens; the context holds " + contextLength);
    }
    if (r.getMaxNewTokens() < 1 || r.getMaxNewTokens() > maxNewTokensLimit) {
      return error(
          "max_new_tokens must be in [1, " + maxNewTokensLimit + "], got " + r.getMaxNewTokens());
    }
    for (String s : r.getStop()) {
      if (s.isEmpty()) {
        return error("stop strings must not be empty");
      }
    }
    Req req;
    try {
      req = toReq(r, ids, seedOf(r), new int[0]);
    } catch (IllegalArgumentException e) {
      return error(e.getMessage());
    }
    return new Outcome(
        new ValidatedRequest(r, ids, RoutingKey.of(r.getRoutingKey(), tenant, ids), req), null);
  }

  /** The request's seed: its own, else one derived from its id. */
  public static long seedOf(PromptRequest r) {
    Long seed = r.getSampling().getSeed();
    return seed != null ? seed : seedOf(r.getRequestId());
  }

  /**
   * The engine request for a producer's record: its prompt tokens, sampling with {@code seed},
   * limits and stops, the tenant as namespace, and the tokens already {@code generated} (a request
   * restored from a checkpoint continues after them).
   *
   * @throws IllegalArgumentException when a sampling option or limit is invalid
   */
  public static Req toReq(PromptRequest r, int[] promptIds, long seed, int[] generated) {
    SamplingOptions o = r.getSampling();
    SamplingParams params =
        SamplingParams.builder()
            .temperature(o.getTemperature())
            .topP(o.getTopP())
            .topK(o.getTopK())
            .minP(o.getMinP())
            .repetitionPenalty(o.getRepetitionPenalty())
            .frequencyPenalty(o.getFrequencyPenalty())
            .presencePenalty(o.getPresencePenalty())
            .seed(seed)
            .build();
    int[] stopIds = r.getStopTokenIds().stream().mapToInt(Integer::intValue).toArray();
    return Req.builder(r.getRequestId(), promptIds)
        .params(params)
        .maxNewTokens(r.getMaxNewTokens())
        .stopStrings(r.getStop())
        .stopTokenIds(stopIds)
        .ignoreEos(r.getIgnoreEos())
        .namespace(r.getTenant() == null ? "" : r.getTenant())
        .generated(generated)
        .deadlineEpochMillis(r.getDeadlineEpochMs() == null ? 0 : r.getDeadlineEpochMs())
        .build();
  }

  /** A stable seed from the request id (the same on every replay or restore). */
  static long seedOf(String requestId) {
    long h = 0x9E3779B97F4A7C15L;
    for (int i = 0; i < requestId.length(); i++) {
      h = (h ^ requestId.charAt(i)) * 0xBF58476D1CE4E5B9L;
    }
    return h ^ (h >>> 31);
  }

  private static Outcome error(String message) {
    return new Outcome(null, message);
  }
}
