package io.flinfer.runtime.model;

import io.flinfer.runtime.tensor.WeightMatrix;

/**
 * Every weight of a Llama model. Matrices stay in their (mapped) files; only the small norm vectors
 * are on the heap.
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
    WeightMatrix classifier) {

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
    if (rmsFinal.length != c.dim()) {
      throw new ModelFormatException(
          source, "final norm has " + rmsFinal.length + " values, expected " + c.dim());
    }
    for (int l = 0; l < c.layers(); l++) {
      expect(wq[l], c.dim(), c.dim(), "layer " + l + " wq", source);
      expect(wk[l], c.kvDim(), c.dim(), "layer " + l + " wk", source);
      expect(wv[l], c.kvDim(), c.dim(), "layer " + l + " wv", source);
      expect(wo[l], c.dim(), c.dim(), "layer " + l + " wo", source);
      expect(w1[l], c.hiddenDim(), c.dim(), "layer " + l + " w1", source);
      expect(w2[l], c.dim(), c.hiddenDim(), "layer " + l + " w2", source);
      expect(w3[l], c.hiddenDim(), c.dim(), "layer " + l + " w3", source);
      if (rmsAtt[l].length != c.dim() || rmsFfn[l].length != c.dim()) {
        throw new ModelFormatException(
            source, "layer " + l + " norm weights do not have " + c.dim() + " values");
      }
    }
  }

  private static void expect(WeightMatrix m, int rows, int cols, String what, String source) {
    if (m.rows() != rows || m.cols() != cols) {
      throw new ModelFormatException(
          source, what + " is " + m.rows() + "x" + m.cols() + ", expected " + rows + "x" + cols);
    }
  }
}
