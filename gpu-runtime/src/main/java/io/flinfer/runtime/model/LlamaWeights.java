package io.flinfer.runtime.model;

import io.flinfer.runtime.tensor.WeightMatrix;

/**
 * Every weight of a model. Matrices stay in their (mapped) files; only the small vectors (norms,
 * biases) are on the heap. The optional tensors are null when the model has none: {@code bq, bk,
 * bv} (Qwen2's projection biases), {@code qNorm, kNorm} (Qwen3's and Gemma 3's per-head q/k RMSNorm
 * weights), {@code postAttNorm, postFfnNorm} (Gemma's norms of the attention's and the
 * feed-forward's outputs).
 */
public record LlamaWeights(
    WeightMatrix tokenEmbedding,
    float[][] rmsAtt,
    WeightMatrix[] wq,
    WeightMatrix[] wk,
    WeightMatrix[] wv,
    WeightMatrix[] wo,
    float[][] rmsFfn,
    WeightMatrix[] w1,
    WeightMatrix[] w2,
    WeightMatrix[] w3,
    float[] rmsFinal,
    WeightMatrix classifier,
    float[][] bq,
    float[][] bk,
    float[][] bv,
    float[][] qNorm,
    float[][] kNorm,
    float[][] postAttNorm,
    float[][] postFfnNorm) {

  /** A model without post norms. */
  public LlamaWeights(
      WeightMatrix tokenEmbedding,
      float[][] rmsAtt,
      WeightMatrix[] wq,
      WeightMatrix[] wk,
      WeightMatrix[] wv,
      WeightMatrix[] wo,
      float[][] rmsFfn,
      WeightMatrix[] w1,
      WeightMatrix[] w2,
      WeightMatrix[] w3,
      float[] rmsFinal,
      WeightMatrix classifier,
      float[][] bq,
      float[][] bk,
      float[][] bv,
      float[][] qNorm,
      float[][] kNorm) {
    this(
        tokenEmbedding,
        rmsAtt,
        wq,
        wk,
        wv,
        wo,
        rmsFfn,
        w1,
        w2,
        w3,
        rmsFinal,
        classifier,
        bq,
        bk,
        bv,
        qNorm,
        kNorm,
        null,
        null);
  }

  /** A Llama-2-style model: no biases, no q/k norms. */
  public LlamaWeights(
      WeightMatrix tokenEmbedding,
      float[][] rmsAtt,
      WeightMatrix[] wq,
      WeightMatrix[] wk,
      WeightMatrix[] wv,
      WeightMatrix[] wo,
      float[][] rmsFfn,
      WeightMatrix[] w1,
      WeightMatrix[] w2,
      WeightMatrix[] w3,
      float[] rmsFinal,
      WeightMatrix classifier) {
    this(
        tokenEmbedding,
        rmsAtt,
        wq,
        wk,
        wv,
        wo,
        rmsFfn,
        w1,
        w2,
        w3,
        rmsFinal,
        classifier,
        null,
        null,
        null,
        null,
        null);
  }

  /** Whether the classifier is the token embedding (tied embeddings). */
  public boolean tiedEmbeddings() {
    return classifier == tokenEmbedding;
  }

  /** Bytes of weights read by one forward step (every matrix once). */
  public long matrixBytes() {
    long b = classifier.byteSize();
    for (int l = 0; l < wq.length; l++) {
      b += wq[l].byteSize() + wk[l].byteSize() + wv[l].byteSize() + wo[l].byteSize();
      b += w1[l].byteSize() + w2[l].byteSize() + w3[l].byteSize();
    }
    return b;
  }

  /** Checks that every tensor has the shape {@code config} implies. */
  public void validate(ModelConfig c, String source) {
    expect(tokenEmbedding, c.vocabSize(), c.dim(), "token embedding", source);
    expect(classifier, c.vocabSize(), c.dim(), "classifier", source);
    vector(rmsFinal, c.dim(), "final norm", source);
    for (int l = 0; l < c.layers(); l++) {
      String p = "layer " + l + " ";
      expect(wq[l], c.qDim(), c.dim(), p + "wq", source);
      expect(wk[l], c.kvDim(), c.dim(), p + "wk", source);
      expect(wv[l], c.kvDim(), c.dim(), p + "wv", source);
      expect(wo[l], c.dim(), c.qDim(), p + "wo", source);
      expect(w1[l], c.hiddenDim(), c.dim(), p + "w1", source);
      expect(w2[l], c.dim(), c.hiddenDim(), p + "w2", source);
      expect(w3[l], c.hiddenDim(), c.dim(), p + "w3", source);
      vector(rmsAtt[l], c.dim(), p + "attention norm", source);
      vector(rmsFfn[l], c.dim(), p + "feed-forward norm", source);
    }
    optional(c.qkvBias(), bq, c.qDim(), c, "q bias", source);
    optional(c.qkvBias(), bk, c.kvDim(), c, "k bias", source);
    optional(c.qkvBias(), bv, c.kvDim(), c, "v bias", source);
    optional(c.qkNorm(), qNorm, c.headDim(), c, "q norm", source);
    optional(c.qkNorm(), kNorm, c.headDim(), c, "k norm", source);
    optional(c.postNorms(), postAttNorm, c.dim(), c, "post-attention norm", source);
    optional(c.postNorms(), postFfnNorm, c.dim(), c, "post-feed-forward norm", source);
  }

  private static void optional(
      boolean present, float[][] v, int n, ModelConfig c, String what, String source) {
    if (!present) {
      if (v != null) {
        throw new ModelFormatException(source, what + " given but the model does not use it");
      }
      return;
    }
    if (v == null || v.length != c.layers()) {
      throw new ModelFormatException(source, what + " is missing");
    }
    for (int l = 0; l < v.length; l++) {
      vector(v[l], n, "layer " + l + " " + what, source);
    }
  }

  private static void vector(float[] v, int n, String what, String source) {
    if (v == null || v.length != n) {
      throw new ModelFormatException(
          source,
          what
              + " has "
              + (v == null ? "no" : String.valueOf(v.length))
              + " values, expected "
              + n);
    }
  }

  private static void expect(WeightMatrix m, int rows, int cols, String what, String source) {
    if (m.rows() != rows || m.cols() != cols) {
      throw new ModelFormatException(
          source, what + " is " + m.rows() + "x" + m.cols() + ", expected " + rows + "x" + cols);
    }
  }
}
