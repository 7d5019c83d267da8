package io.flinfer.operators.engine;

import io.flinfer.memcache.prefix.CacheRequest;
import io.flinfer.runtime.grammar.OutputConstraint;
import io.flinfer.runtime.grammar.ThoughtBudget;
import io.flinfer.runtime.sampling.SamplingParams;
import io.flinfer.runtime.tokenizer.TextDecoder;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * One request inside the engine (SGLang's {@code Req}): its prompt and generated tokens, how to
 * sample and stop, its cache state ({@code prefix_indices}, {@code last_node}, {@code
 * req_pool_idx}) and its timings. Built with {@link #builder}, which validates.
 */
public final class Req {
  private final String id;
  private final int promptLen;
  private final SamplingParams params;
  private final int maxNewTokens;
  private final int[] stopTokenIds;
  private final List<String> stopStrings;
  private final boolean ignoreEos;
  private final long deadlineEpochMillis;
  private final int promptLogprobs;
  private final int promptLogprobsStart;
  final CacheRequest cache;

  /** Prompt then output tokens: {@code fill_ids}. */
  int[] tokens;

  int len;

  /** Tokens whose K/V is in the pool. */
  int computedLen;

  /** New tokens in the current extend step ({@code extend_input_len}). */
  int extendInputLen;

  /** Positions matched in the cache when last admitted. */
  int prefixLen;

  /** Tokens after {@code prefixLen} that only the host tier holds, as last matched. */
  int hostHitLength;

  /** Prompt tokens the cache served at the first admission (-1 before it). */
  int cachedTokens = -1;

  /** The generation limit after the context and pool limits. */
  int effectiveMaxNewTokens;

  boolean chunking;
  FinishReason finish;
  TextDecoder decoder;

  /** The prompt log-probabilities read so far, until they leave; null where none are asked. */
  PromptScores scores;

  /** The response format's state after the output so far; null for free text. */
  OutputConstraint constraint;

  /** The cap on the output's thought after the output so far; null where it has none. */
  ThoughtBudget budget;

  /** Draft tokens the current decode step verifies, past {@code len} in {@code tokens}. */
  int drafted;

  /** Its verification; null until the request first speculates. */
  DraftVerification verification;

  StringBuilder text;
  int retractions;
  long queuedNanos;
  long admittedNanos;
  long firstTokenNanos;
  long lastTokenNanos;

  private Req(Builder b) {
    this.id = b.id;
    this.promptLen = b.promptIds.length;
    this.params = b.params;
    this.maxNewTokens = b.maxNewTokens;
    this.deadlineEpochMillis = b.deadlineEpochMillis;
    this.promptLogprobs = b.promptLogprobs;
    this.promptLogprobsStart = b.promptLogprobsStart;
    this.stopTokenIds = b.stopTokenIds.clone();
    this.stopStrings = List.copyOf(b.stopStrings);
    this.ignoreEos = b.ignoreEos;
    this.cache = new CacheRequest(b.namespace);
    this.tokens =
        Arrays.copyOf(b.promptIds, b.promptIds.length + Math.min(b.maxNewTokens, 1 << 16));
    this.len = b.promptIds.length;
    System.arraycopy(b.generated, 0, grow(b.generated.length), len, b.generated.length);
    this.len += b.generated.length;
  }

  public static Builder builder(String id, int[] promptIds) {
    return new Builder(id, promptIds);
  }

  public String id() {
    return id;
  }

  public String namespace() {
    return cache.namespace();
  }

  public SamplingParams params() {
    return params;
  }

  public int maxNewTokens() {
    return maxNewTokens;
  }

  public int promptLen() {
    return promptLen;
  }

  public int outputLen() {
    return len - promptLen;
  }

  /** The prompt tokens (a copy). */
  public int[] originInputIds() {
    return Arrays.copyOf(tokens, promptLen);
  }

  /** The generated tokens (a copy). */
  public int[] outputIds() {
    return Arrays.copyOfRange(tokens, promptLen, len);
  }

  public FinishReason finishReason() {
    return finish;
  }

  public int retractions() {
    return retractions;
  }

  public long queuedNanos() {
    return queuedNanos;
  }

  public long firstTokenNanos() {
    return firstTokenNanos;
  }

  public long lastTokenNanos() {
    return lastTokenNanos;
  }

  boolean ignoreEos() {
    return ignoreEos;
  }

  /** Wall-clock deadline in ms since the epoch, or 0 for none. */
  public long deadlineEpochMillis() {
    return deadlineEpochMillis;
  }

  /**
   * Alternatives per prompt token for its prompt log-probabilities (0 to 20: each token's own
   * only), or -1: none are asked.
   */
  public int promptLogprobs() {
    return promptLogprobs;
  }

  /**
   * The first position whose prompt log-probability is read (SGLang's {@code logprob_start_len}):
   * the positions before it are not scored, and may come from the prefix cache.
   */
  public int promptLogprobsStart() {
    return promptLogprobsStart;
  }

  /** The request's own stop tokens. */
  int[] stopTokenIds() {
    return stopTokenIds;
  }

  boolean isStopToken(int token) {
    for (int t : stopTokenIds) {
      if (t == token) {
        return true;
      }
    }
    return false;
  }

  List<String> stopStrings() {
    return stopStrings;
  }

  int[] grow(int extra) {
    if (len + extra > tokens.length) {
      tokens = Arrays.copyOf(tokens, Math.max(tokens.length * 2, len + extra));
    }
    return tokens;
  }

  void append(int token) {
    grow(1)[len++] = token;
  }

  @Override
  public String toString() {
    return "Req{"
        + id
        + ", prompt="
        + promptLen
        + ", output="
        + outputLen()
        + ", computed="
        + computedLen
        + "}";
  }

  /** Validating builder. */
  public static final class Builder {
    private final String id;
    private final int[] promptIds;
    private SamplingParams params = SamplingParams.GREEDY;
    private int maxNewTokens = 128;
    private int[] stopTokenIds = new int[0];
    private List<String> stopStrings = List.of();
    private boolean ignoreEos;
    private String namespace = "";
    private int[] generated = new int[0];
    private long deadlineEpochMillis;
    private int promptLogprobs = -1;
    private int promptLogprobsStart;

    private Builder(String id, int[] promptIds) {
      this.id = Objects.requireNonNull(id, "request id");
      this.promptIds = Objects.requireNonNull(promptIds, "prompt ids").clone();
    }

    public Builder params(SamplingParams p) {
      params = Objects.requireNonNull(p);
      return this;
    }

    public Builder maxNewTokens(int n) {
      maxNewTokens = n;
      return this;
    }

    public Builder stopTokenIds(int... ids) {
      stopTokenIds = ids.clone();
      return this;
    }

    public Builder stopStrings(List<String> s) {
      stopStrings = List.copyOf(s);
      return this;
    }

    public Builder ignoreEos(boolean v) {
      ignoreEos = v;
      return this;
    }

    /** The tenant or cache salt whose prefix cache this request uses ("" is shared). */
    public Builder namespace(String ns) {
      namespace = ns == null ? "" : ns;
      return this;
    }

    /**
     * Wall-clock time (ms since the epoch) after which the request is aborted wherever it is; 0 for
     * none.
     */
    public Builder deadlineEpochMillis(long t) {
      deadlineEpochMillis = t;
      return this;
    }

    /**
     * Asks for the prompt's log-probabilities with {@code top} (0 to 20) alternatives per token;
     * -1: none.
     */
    public Builder promptLogprobs(int top) {
      promptLogprobs = top;
      return this;
    }

    /**
     * Reads the prompt log-probabilities from position {@code position} on (0, the default: from
     * the second prompt token on); the positions before it may come from the prefix cache.
     */
    public Builder promptLogprobsStart(int position) {
      promptLogprobsStart = position;
      return this;
    }

    /** Tokens already generated (a request restored from a checkpoint continues after them). */
    public Builder generated(int... ids) {
      generated = ids.clone();
      return this;
    }

    public Req build() {
      if (id.isEmpty()) {
        throw new IllegalArgumentException("request id must not be empty");
      }
      if (promptIds.length == 0) {
        throw new IllegalArgumentException("request " + id + ": the prompt has no tokens");
      }
      if (maxNewTokens < 1) {
        throw new IllegalArgumentException(
            "request " + id + ": max_new_tokens must be >= 1, got " + maxNewTokens);
      }
      if (generated.length >= maxNewTokens) {
        throw new IllegalArgumentException(
            "request "
                + id
                + ": already generated "
                + generated.length
                + " of "
                + maxNewTokens
                + " tokens");
      }
      if (promptLogprobs < -1 || promptLogprobs > SamplingParams.MAX_TOP_LOGPROBS) {
        throw new IllegalArgumentException(
            "request "
                + id
                + ": prompt_logprobs must be between 0 and "
                + SamplingParams.MAX_TOP_LOGPROBS
                + ", got "
                + promptLogprobs);
      }
      if (promptLogprobsStart < 0 || promptLogprobsStart >= Math.max(1, promptIds.length)) {
        throw new IllegalArgumentException(
            "request "
                + id
                + ": the prompt logprobs' start must be a position of the prompt, got "
                + promptLogprobsStart);
      }
      for (String s : stopStrings) {
        if (s == null || s.isEmpty()) {
          throw new IllegalArgumentException("request " + id + ": stop strings must not be empty");
        }
      }
      return new Req(this);
    }
  }
}
