package io.flinfer.runtime.model;

/**
 * The shape of a Llama-architecture model.
 *
 * @param dim model width
 * @param hiddenDim feed-forward width
 * @param layers transformer blocks
 * @param heads query heads
 * @param kvHeads key/value heads (fewer than {@code heads} under grouped-query attention)
 * @param vocabSize tokens in the vocabulary
 * @param contextLength the longest sequence the model takes
 * @param ropeTheta RoPE base frequency
 * @param normEps RMSNorm epsilon
 */
public record ModelConfig(
    int dim,
    int hiddenDim,
    int layers,
    int heads,
    int kvHeads,
    int vocabSize,
    int contextLength,
    float ropeTheta,
    float normEps) {

  public ModelConfig {
    if (dim <= 0 || hiddenDim <= 0 || layers <= 0 || heads <= 0 || kvHeads <= 0) {
      throw new IllegalArgumentException(
          "model dimensions must be positive: " + describe(dim, hiddenDim, layers, heads, kvHeads));
    }
    if (dim % heads != 0) {
      throw new IllegalArgumentException("dim " + dim + " is not a multiple of heads " + heads);
    }
    if (heads % kvHeads != 0) {
      throw new IllegalArgumentException(
          "heads " + heads + " is not a multiple of kv heads " + kvHeads);
    }
    if ((dim / heads) % 2 != 0) {
      throw new IllegalArgumentException("head size " + dim / heads + " must be even for RoPE");
    }
    if (vocabSize <= 0 || contextLength <= 0) {
      throw new IllegalArgumentException(
          "vocab size and context length must be positive: " + vocabSize + ", " + contextLength);
    }
  }

  private static String describe(int dim, int hiddenDim, int layers, int heads, int kvHeads) {
    return "dim="
        + dim
        + " hidden="
        + hiddenDim
        + " layers="
        + layers
        + " heads="
        + heads
        + " kvHeads="
        + kvHeads;
  }

  public int headDim() {
    return dim / heads;
  }

  public int kvDim() {
    return kvHeads * headDim();
  }

  /** Query heads per KV head. */
  public int groupSize() {
    return heads / kvHeads;
  }

  public ModelConfig withContextLength(int contextLength) {
    return new ModelConfig(
        dim, hiddenDim, layers, heads, kvHeads, vocabSize, contextLength, ropeTheta, normEps);
  }

  /** Llama 2 110M shapes (the largest llama2.c TinyStories model), with a 32k vocabulary. */
  public static ModelConfig llama110M() {
    return new ModelConfig(768, 2048, 12, 12, 12, 32000, 1024, 10000f, 1e-5f);
  }
}
