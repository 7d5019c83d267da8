package io.flinfer.runtime.model;

/**
 * The description of a decoder-only transformer that one forward pass serves. What differs between
 * model families (Llama, Qwen2, Qwen3, Phi-3, Gemma 2 and 3, Granite) is data here: the head width,
 * the rope, whether the q/k/v projections carry biases and whether queries and keys are
 * RMS-normalised per head, the embedding's scale, the feed-forward activation, norms after the
 * attention and the feed-forward blocks, sliding-window layers, soft caps and multipliers. Fused
 * tensors in a file (Phi-3's {@code attn_qkv}) are split into views when loading, so they need no
 * flag.
 *
 * @param architecture the family's name as GGUF spells it ({@code llama}, {@code qwen2}, ...)
 * @param dim model width
 * @param hiddenDim feed-forward width
 * @param layers transformer blocks
 * @param heads query heads
 * @param kvHeads key/value heads (fewer than {@code heads} under grouped-query attention)
 * @param headDim values per head (Qwen3: not {@code dim / heads})
 * @param vocabSize tokens in the vocabulary
 * @param contextLength the longest sequence the model takes
 * @param normEps RMSNorm epsilon
 * @param rope how positions rotate queries and keys
 * @param qkvBias whether q, k and v have biases (Qwen2)
 * @param qkNorm whether q and k are RMS-normalised per head before the rope (Qwen3, Gemma 3)
 * @param embeddingScale what a token's embedding is multiplied by (Gemma: sqrt(dim); others 1)
 * @param activation the gated feed-forward activation
 * @param postNorms whether the attention's and the feed-forward's outputs are RMS-normalised before
 *     they join the residual (Gemma 2 and 3)
 * @param slidingWindow the windowed layers, or null when every layer sees the whole context
 * @param softCaps soft caps of the attention scores and the output logits (Gemma 2), or null
 * @param multipliers Granite's attention, residual and logit multipliers, or null
 */
public record ModelConfig(
    String architecture,
    int dim,
    int hiddenDim,
    int layers,
    int heads,
    int kvHeads,
    int headDim,
    int vocabSize,
    int contextLength,
    float normEps,
    RopeConfig rope,
    boolean qkvBias,
    boolean qkNorm,
    float embeddingScale,
    GatedActivation activation,
    boolean postNorms,
    SlidingWindow slidingWindow,
    SoftCaps softCaps,
    Multipliers multipliers) {

  public ModelConfig {
    if (dim <= 0 || hiddenDim <= 0 || layers <= 0 || heads <= 0 || kvHeads <= 0 || headDim <= 0) {
      throw new IllegalArgumentException(
          "model dimensions must be positive: "
              + describe(dim, hiddenDim, layers, heads, kvHeads, headDim));
    }
    if (heads % kvHeads != 0) {
      throw new IllegalArgumentException(
          "heads " + heads + " is not a multiple of kv heads " + kvHeads);
    }
    if (headDim % 2 != 0) {
      throw new IllegalArgumentException("head size " + headDim + " must be even for RoPE");
    }
    if (vocabSize <= 0 || contextLength <= 0) {
      throw new IllegalArgumentException(
          "vocab size and context length must be positive: " + vocabSize + ", " + contextLength);
    }
    if (rope == null) {
      throw new IllegalArgumentException("a rope description is required");
    }
    if (!(embeddingScale > 0) || activation == null) {
      throw new IllegalArgumentException("an embedding scale and an activation are required");
    }
    if (rope.freqFactors() != null && rope.freqFactors().length != headDim / 2) {
      throw new IllegalArgumentException(
          "rope frequency factors have "
              + rope.freqFactors().length
              + " values, a head of "
              + headDim
              + " needs "
              + headDim / 2);
    }
  }

  /** What a query-key product is multiplied by: 1/sqrt(head), or Granite's own. */
  public float attentionScale() {
    return multipliers == null ? 1f / (float) Math.sqrt(headDim) : multipliers.attention();
  }

  /** What a block's output is multiplied by before it joins the residual (1: nothing). */
  public float residualScale() {
    return multipliers == null ? 1f : multipliers.residual();
  }

  /** What the output logits are divided by (1: nothing). */
  public float logitDivisor() {
    return multipliers == null ? 1f : multipliers.logits();
  }

  /** The cap of the attention scores, or 0 when they are not capped. */
  public float attentionSoftCap() {
    return softCaps == null ? 0f : softCaps.attention();
  }

  /** The cap of the output logits, or 0 when they are not capped. */
  public float logitSoftCap() {
    return softCaps == null ? 0f : softCaps.logits();
  }

  /** A model without Gemma's embedding scale, GeGLU, post norms and windowed layers. */
  public ModelConfig(
      String architecture,
      int dim,
      int hiddenDim,
      int layers,
      int heads,
      int kvHeads,
      int headDim,
      int vocabSize,
      int contextLength,
      float normEps,
      RopeConfig rope,
      boolean qkvBias,
      boolean qkNorm) {
    this(
        architecture,
        dim,
        hiddenDim,
        layers,
        heads,
        kvHeads,
        headDim,
        vocabSize,
        contextLength,
        normEps,
        rope,
        qkvBias,
        qkNorm,
        1f,
        GatedActivation.SILU,
        false,
        null,
        null,
        null);
  }

  /** A Llama-2-style model: head width dim / heads, adjacent-pair rope, no biases or q/k norms. */
  public ModelConfig(
      int dim,
      int hiddenDim,
      int layers,
      int heads,
      int kvHeads,
      int vocabSize,
      int contextLength,
      float ropeTheta,
      float normEps) {
    this(
        "llama",
        dim,
        hiddenDim,
        layers,
        heads,
        kvHeads,
        checkedHeadDim(dim, heads),
        vocabSize,
        contextLength,
        normEps,
        RopeConfig.normal(ropeTheta),
        false,
        false);
  }

  private static int checkedHeadDim(int dim, int heads) {
    if (heads <= 0 || dim <= 0 || dim % heads != 0) {
      throw new IllegalArgumentException("dim " + dim + " is not a multiple of heads " + heads);
    }
    return dim / heads;
  }

  private static String describe(
      int dim, int hiddenDim, int layers, int heads, int kvHeads, int headDim) {
    return "dim="
        + dim
        + " hidden="
        + hiddenDim
        + " layers="
        + layers
        + " heads="
        + heads
        + " kvHeads="
        + kvHeads
        + " headDim="
        + headDim;
  }

  /** Width of all query heads together: the attention's output width. */
  public int qDim() {
    return heads * headDim;
  }

  public int kvDim() {
    return kvHeads * headDim;
  }

  /** Query heads per KV head. */
  public int groupSize() {
    return heads / kvHeads;
  }

  public float ropeTheta() {
    return rope.theta();
  }

  /** A builder that starts from this description, for one that differs in a few parts. */
  public Builder toBuilder() {
    return new Builder(this);
  }

  /** Builds a description part by part; {@link #build} validates it as the constructor does. */
  public static final class Builder {
    private String architecture;
    private int dim;
    private int hiddenDim;
    private int layers;
    private int heads;
    private int kvHeads;
    private int headDim;
    private int vocabSize;
    private int contextLength;
    private float normEps;
    private RopeConfig rope;
    private boolean qkvBias;
    private boolean qkNorm;
    private float embeddingScale;
    private GatedActivation activation;
    private boolean postNorms;
    private SlidingWindow slidingWindow;
    private SoftCaps softCaps;
    private Multipliers multipliers;

    private Builder(ModelConfig c) {
      architecture = c.architecture;
      dim = c.dim;
      hiddenDim = c.hiddenDim;
      layers = c.layers;
      heads = c.heads;
      kvHeads = c.kvHeads;
      headDim = c.headDim;
      vocabSize = c.vocabSize;
      contextLength = c.contextLength;
      normEps = c.normEps;
      rope = c.rope;
      qkvBias = c.qkvBias;
      qkNorm = c.qkNorm;
      embeddingScale = c.embeddingScale;
      activation = c.activation;
      postNorms = c.postNorms;
      slidingWindow = c.slidingWindow;
      softCaps = c.softCaps;
      multipliers = c.multipliers;
    }

    public Builder architecture(String architecture) {
      this.architecture = architecture;
      return this;
    }

    public Builder headDim(int headDim) {
      this.headDim = headDim;
      return this;
    }

    public Builder normEps(float normEps) {
      this.normEps = normEps;
      return this;
    }

    public Builder rope(RopeConfig rope) {
      this.rope = rope;
      return this;
    }

    public Builder embeddingScale(float embeddingScale) {
      this.embeddingScale = embeddingScale;
      return this;
    }

    public Builder activation(GatedActivation activation) {
      this.activation = activation;
      return this;
    }

    public Builder postNorms(boolean postNorms) {
      this.postNorms = postNorms;
      return this;
    }

    public Builder slidingWindow(SlidingWindow slidingWindow) {
      this.slidingWindow = slidingWindow;
      return this;
    }

    public Builder softCaps(SoftCaps softCaps) {
      this.softCaps = softCaps;
      return this;
    }

    public Builder multipliers(Multipliers multipliers) {
      this.multipliers = multipliers;
      return this;
    }

    public ModelConfig build() {
      return new ModelConfig(
          architecture,
          dim,
          hiddenDim,
          layers,
          heads,
          kvHeads,
          headDim,
          vocabSize,
          contextLength,
          normEps,
          rope,
          qkvBias,
          qkNorm,
          embeddingScale,
          activation,
          postNorms,
          slidingWindow,
          softCaps,
          multipliers);
    }
  }

  /** The rope of {@code layer}: a windowed layer's own, or the model's. */
  public RopeConfig rope(int layer) {
    return windowed(layer) ? slidingWindow.rope() : rope;
  }

  /** Whether {@code layer} attends to a sliding window of positions only. */
  public boolean windowed(int layer) {
    return slidingWindow != null && slidingWindow.covers(layer);
  }

  @Override
  public String toString() {
    return architecture
        + "["
        + describe(dim, hiddenDim, layers, heads, kvHeads, headDim)
        + " vocab="
        + vocabSize
        + " ctx="
        + contextLength
        + " eps="
        + normEps
        + " rope="
        + rope
        + (qkvBias ? " qkv-bias" : "")
        + (qkNorm ? " qk-norm" : "")
        + (embeddingScale != 1f ? " embedding-scale=" + embeddingScale : "")
        + (activation != GatedActivation.SILU ? " " + activation.name().toLowerCase() : "")
        + (postNorms ? " post-norms" : "")
        + (slidingWindow != null ? " window=" + slidingWindow : "")
        + (softCaps != null ? " soft-caps=" + softCaps.attention() + "/" + softCaps.logits() : "")
        + (multipliers != null ? " " + multipliers : "")
        + "]";
  }

  /** Llama 2 110M shapes (the largest llama2.c TinyStories model), with a 32k vocabulary. */
  public static ModelConfig llama110M() {
    return new ModelConfig(768, 2048, 12, 12, 12, 32000, 1024, 10000f, 1e-5f);
  }
}
