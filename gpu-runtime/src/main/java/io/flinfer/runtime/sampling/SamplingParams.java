package io.flinfer.runtime.sampling;

import io.flinfer.runtime.grammar.GbnfGrammar;
import io.flinfer.runtime.grammar.JsonPrefix;
import io.flinfer.runtime.grammar.JsonSchemaGrammar;
import io.flinfer.runtime.grammar.OutputState;
import io.flinfer.runtime.grammar.RegexGrammar;
import io.flinfer.runtime.grammar.ResponseFormat;
import io.flinfer.runtime.grammar.Thinking;
import io.flinfer.runtime.grammar.ThinkingPrefix;
import java.util.Objects;

/**
 * How one request picks its tokens. Immutable; build with {@link #builder()}, which validates.
 * Temperature 0 is greedy. Penalties follow the usual serving semantics: the repetition penalty
 * divides positive (multiplies negative) logits of tokens seen in the prompt or output; frequency
 * and presence penalties subtract per occurrence / once for tokens in the output.
 */
public final class SamplingParams {
  public static final SamplingParams GREEDY = builder().build();

  /** The largest bias, either way, that {@code logitBias} may add to a token's logit. */
  public static final float MAX_LOGIT_BIAS = 100f;

  /** {@link #thinkingBudget()} of a request whose thought has no cap. */
  public static final int NO_THINKING_BUDGET = -1;

  /** The most alternatives a request may ask to be reported with each token. */
  public static final int MAX_TOP_LOGPROBS = 20;

  private final float temperature;
  private final int topK;
  private final float topP;
  private final float minP;
  private final float repetitionPenalty;
  private final float frequencyPenalty;
  private final float presencePenalty;
  private final long seed;
  private final int topLogprobs;
  private final int minTokens;
  private final int[] biasedTokens;
  private final float[] biases;
  private final ResponseFormat responseFormat;
  private final String jsonSchema;
  private final String regex;
  private final String grammar;
  private final Thinking thinking;
  private final int thinkingBudget;
  private final JsonSchemaGrammar schemaGrammar;
  private final RegexGrammar regexGrammar;
  private final GbnfGrammar gbnf;

  private SamplingParams(Builder b) {
    this.temperature = b.temperature;
    this.topK = b.topK;
    this.topP = b.topP;
    this.minP = b.minP;
    this.repetitionPenalty = b.repetitionPenalty;
    this.frequencyPenalty = b.frequencyPenalty;
    this.presencePenalty = b.presencePenalty;
    this.seed = b.seed;
    this.topLogprobs = b.topLogprobs;
    this.minTokens = b.minTokens;
    this.biasedTokens = b.biasedTokens.clone();
    this.biases = b.biases.clone();
    this.responseFormat = b.responseFormat;
    this.jsonSchema = b.jsonSchema;
    this.regex = b.regex;
    this.grammar = b.grammar;
    this.thinking = b.thinking;
    this.thinkingBudget = b.thinkingBudget;
    this.schemaGrammar = b.schemaGrammar;
    this.regexGrammar = b.regexGrammar;
    this.gbnf = b.gbnf;
  }

  public static Builder builder() {
    return new Builder();
  }

  public Builder toBuilder() {
    return new Builder()
        .temperature(temperature)
        .topK(topK)
        .topP(topP)
        .minP(minP)
        .repetitionPenalty(repetitionPenalty)
        .frequencyPenalty(frequencyPenalty)
        .presencePenalty(presencePenalty)
        .seed(seed)
        .topLogprobs(topLogprobs)
        .minTokens(minTokens)
        .logitBias(biasedTokens, biases)
        .responseFormat(responseFormat)
        .jsonSchema(jsonSchema)
        .regex(regex)
        .grammar(grammar)
        .thinking(thinking)
        .thinkingBudget(thinkingBudget);
  }

  public float temperature() {
    return temperature;
  }

  public boolean isGreedy() {
    return temperature == 0f;
  }

  /** 0 means no limit. */
  public int topK() {
    return topK;
  }

  public float topP() {
    return topP;
  }

  public float minP() {
    return minP;
  }

  public float repetitionPenalty() {
    return repetitionPenalty;
  }

  public float frequencyPenalty() {
    return frequencyPenalty;
  }

  public float presencePenalty() {
    return presencePenalty;
  }

  public boolean hasPenalties() {
    return repetitionPenalty != 1f || frequencyPenalty != 0f || presencePenalty != 0f;
  }

  /**
   * How many tokens come before the model's end tokens and the request's stop tokens may be chosen
   * (vLLM's {@code min_tokens}); 0: from the first.
   */
  public int minTokens() {
    return minTokens;
  }

  /** How many tokens have a logit bias. */
  public int biasCount() {
    return biasedTokens.length;
  }

  /** The {@code i}-th biased token (ids ascending). */
  public int biasedToken(int i) {
    return biasedTokens[i];
  }

  /** The bias added to {@link #biasedToken}{@code (i)}'s logit. */
  public float bias(int i) {
    return biases[i];
  }

  public long seed() {
    return seed;
  }

  /**
   * How many of the most likely tokens to report, with their log-probabilities, at each generated
   * token's position (0: none). They do not change which token is chosen.
   */
  public int topLogprobs() {
    return topLogprobs;
  }

  /**
   * The shape the output must have: with {@link ResponseFormat#JSON_OBJECT} (or {@link
   * ResponseFormat#JSON_SCHEMA}) only tokens that keep the text the start of one JSON object (of
   * the schema) are candidates, and every log-probability is read from that restricted
   * distribution.
   */
  public ResponseFormat responseFormat() {
    return responseFormat;
  }

  /** The JSON Schema text of a {@link ResponseFormat#JSON_SCHEMA} request; null otherwise. */
  public String jsonSchema() {
    return jsonSchema;
  }

  /** The regular expression of a {@link ResponseFormat#REGEX} request; null otherwise. */
  public String regex() {
    return regex;
  }

  /** The GBNF grammar of a {@link ResponseFormat#GRAMMAR} request; null otherwise. */
  public String grammar() {
    return grammar;
  }

  /** Whether a reasoning model's output may think before its shape holds. */
  public Thinking thinking() {
    return thinking;
  }

  /**
   * The most tokens a thought may have before it is closed ({@link
   * io.flinfer.runtime.grammar.ThoughtBudget}); {@link #NO_THINKING_BUDGET} for no cap. It applies
   * where the output may think ({@link #thinking()}).
   */
  public int thinkingBudget() {
    return thinkingBudget;
  }

  /**
   * A new state at the start of the output's shape (after a thought, where the output may think
   * first); null for free text.
   */
  public OutputState outputShape() {
    OutputState shape =
        switch (responseFormat) {
          case JSON_OBJECT -> new JsonPrefix();
          case JSON_SCHEMA -> schemaGrammar.start();
          case REGEX -> regexGrammar.start();
          case GRAMMAR -> gbnf.start();
          default -> null;
        };
    return shape == null || thinking == Thinking.NONE ? shape : new ThinkingPrefix(shape, thinking);
  }

  @Override
  public String toString() {
    return "SamplingParams{temperature="
        + temperature
        + ", topK="
        + topK
        + ", topP="
        + topP
        + ", minP="
        + minP
        + ", repetitionPenalty="
        + repetitionPenalty
        + ", frequencyPenalty="
        + frequencyPenalty
        + ", presencePenalty="
        + presencePenalty
        + ", seed="
        + seed
        + ", topLogprobs="
        + topLogprobs
        + ", responseFormat="
        + responseFormat.wireName()
        + ", thinking="
        + thinking
        + ", thinkingBudget="
        + thinkingBudget
        + "}";
  }

  /** Validating builder; every option has a neutral default. */
  public static final class Builder {
    private float temperature = 0f;
    private int topK = 0;
    private float topP = 1f;
    private float minP = 0f;
    private float repetitionPenalty = 1f;
    private float frequencyPenalty = 0f;
    private float presencePenalty = 0f;
    private long seed = 0L;
    private int topLogprobs = 0;
    private int minTokens = 0;
    private int[] biasedTokens = new int[0];
    private float[] biases = new float[0];
    private ResponseFormat responseFormat = ResponseFormat.TEXT;
    private String jsonSchema;
    private String regex;
    private String grammar;
    private Thinking thinking = Thinking.NONE;
    private int thinkingBudget = NO_THINKING_BUDGET;
    private JsonSchemaGrammar schemaGrammar;
    private RegexGrammar regexGrammar;
    private GbnfGrammar gbnf;

    public Builder temperature(float v) {
      temperature = v;
      return this;
    }

    public Builder topK(int v) {
      topK = v;
      return this;
    }

    public Builder topP(float v) {
      topP = v;
      return this;
    }

    public Builder minP(float v) {
      minP = v;
      return this;
    }

    public Builder repetitionPenalty(float v) {
      repetitionPenalty = v;
      return this;
    }

    public Builder frequencyPenalty(float v) {
      frequencyPenalty = v;
      return this;
    }

    public Builder presencePenalty(float v) {
      presencePenalty = v;
      return this;
    }

    public Builder seed(long v) {
      seed = v;
      return this;
    }

    public Builder topLogprobs(int v) {
      topLogprobs = v;
      return this;
    }

    public Builder minTokens(int v) {
      minTokens = v;
      return this;
    }

    /**
     * Adds {@code biases[i]} to the logit of token {@code tokens[i]} before every choice (after
     * penalties): OpenAI's {@code logit_bias}. Each token once, each bias in [-100, 100].
     */
    public Builder logitBias(int[] tokens, float[] biases) {
      if (tokens.length != biases.length) {
        throw new IllegalArgumentException("logit_bias: as many tokens as biases");
      }
      Integer[] order = new Integer[tokens.length];
      for (int i = 0; i < order.length; i++) {
        order[i] = i;
      }
      java.util.Arrays.sort(order, (a, b) -> Integer.compare(tokens[a], tokens[b]));
      biasedTokens = new int[tokens.length];
      this.biases = new float[tokens.length];
      for (int i = 0; i < order.length; i++) {
        biasedTokens[i] = tokens[order[i]];
        this.biases[i] = biases[order[i]];
      }
      return this;
    }

    public Builder responseFormat(ResponseFormat v) {
      responseFormat = Objects.requireNonNull(v, "response format");
      return this;
    }

    /** The schema of a {@link ResponseFormat#JSON_SCHEMA} request (null for the others). */
    public Builder jsonSchema(String v) {
      jsonSchema = v;
      return this;
    }

    /** The regular expression of a {@link ResponseFormat#REGEX} request (null for the others). */
    public Builder regex(String v) {
      regex = v;
      return this;
    }

    /** The GBNF grammar of a {@link ResponseFormat#GRAMMAR} request (null for the others). */
    public Builder grammar(String v) {
      grammar = v;
      return this;
    }

    /** Whether the output may think before its shape holds (none by default). */
    public Builder thinking(Thinking v) {
      thinking = Objects.requireNonNull(v, "thinking");
      return this;
    }

    /**
     * The most tokens a thought may have ({@link #NO_THINKING_BUDGET}, the default: no cap); it
     * applies where {@link #thinking} lets the output think.
     */
    public Builder thinkingBudget(int v) {
      thinkingBudget = v;
      return this;
    }

    public SamplingParams build() {
      check(
          Float.isFinite(temperature) && temperature >= 0f,
          "temperature must be >= 0, got " + temperature);
      check(topK >= 0, "top_k must be >= 0 (0 = off), got " + topK);
      check(topP > 0f && topP <= 1f, "top_p must be in (0, 1], got " + topP);
      check(minP >= 0f && minP <= 1f, "min_p must be in [0, 1], got " + minP);
      check(
          Float.isFinite(repetitionPenalty) && repetitionPenalty > 0f,
          "repetition_penalty must be > 0, got " + repetitionPenalty);
      check(
          Float.isFinite(frequencyPenalty) && Math.abs(frequencyPenalty) <= 2f,
          "frequency_penalty must be in [-2, 2], got " + frequencyPenalty);
      check(
          Float.isFinite(presencePenalty) && Math.abs(presencePenalty) <= 2f,
          "presence_penalty must be in [-2, 2], got " + presencePenalty);
      check(
          topLogprobs >= 0 && topLogprobs <= MAX_TOP_LOGPROBS,
          "top_logprobs must be in [0, " + MAX_TOP_LOGPROBS + "], got " + topLogprobs);
      check(minTokens >= 0, "min_tokens must be >= 0, got " + minTokens);
      check(
          thinkingBudget >= NO_THINKING_BUDGET,
          "thinking_token_budget must be >= 0, got " + thinkingBudget);
      for (int i = 0; i < biasedTokens.length; i++) {
        check(
            biasedTokens[i] >= 0 && (i == 0 || biasedTokens[i] != biasedTokens[i - 1]),
            "logit_bias: token ids must be distinct and >= 0, got " + biasedTokens[i]);
        check(
            Float.isFinite(biases[i]) && Math.abs(biases[i]) <= MAX_LOGIT_BIAS,
            "logit_bias must be in [-100, 100], got "
                + biases[i]
                + " for token "
                + biasedTokens[i]);
      }
      check(
          (responseFormat == ResponseFormat.JSON_SCHEMA) == (jsonSchema != null),
          "json_schema is given with response_format json_schema, and only then");
      check(
          (responseFormat == ResponseFormat.REGEX) == (regex != null),
          "regex is given with response_format regex, and only then");
      check(
          (responseFormat == ResponseFormat.GRAMMAR) == (grammar != null),
          "grammar is given with response_format grammar, and only then");
      // Compiled once here: an unsupported schema, regex or grammar is refused with the request.
      schemaGrammar = jsonSchema == null ? null : JsonSchemaGrammar.compile(jsonSchema);
      regexGrammar = regex == null ? null : RegexGrammar.compile(regex);
      gbnf = grammar == null ? null : GbnfGrammar.compile(grammar);
      return new SamplingParams(this);
    }

    private static void check(boolean ok, String message) {
      if (!ok) {
        throw new IllegalArgumentException(message);
      }
    }
  }
}
