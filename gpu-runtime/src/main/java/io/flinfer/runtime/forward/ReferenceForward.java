package io.flinfer.runtime.forward;

import io.flinfer.runtime.kernel.GeluTable;
import io.flinfer.runtime.model.GatedActivation;
import io.flinfer.runtime.model.LlamaModel;
import io.flinfer.runtime.model.LlamaWeights;
import io.flinfer.runtime.model.ModelConfig;
import io.flinfer.runtime.model.RopeConfig;
import io.flinfer.runtime.tensor.WeightMatrix;

/**
 * The plain reference forward pass: one sequence, one token at a time, scalar loops, its own
 * contiguous KV cache, the math written out as in llama2.c's {@code forward}. Fast kernels are
 * tested against it; it is never used to serve.
 */
public final class ReferenceForward {
  private final ModelConfig c;
  private final LlamaWeights w;
  private final float[][] keyCache;
  private final float[][] valueCache;
  private int position;

  public ReferenceForward(LlamaModel model) {
    this.c = model.config();
    this.w = model.weights();
    this.keyCache = new float[c.layers()][c.contextLength() * c.kvDim()];
    this.valueCache = new float[c.layers()][c.contextLength() * c.kvDim()];
  }

  /** Feeds the next token and returns the logits for the position after it. */
  public float[] next(int token) {
    int kvDim = c.kvDim();
    int hd = c.headDim();
    int pos = position++;
    float[] x = row(w.tokenEmbedding(), token);
    for (int i = 0; i < x.length; i++) {
      x[i] *= c.embeddingScale();
    }
    for (int l = 0; l < c.layers(); l++) {
      RopeConfig layerRope = c.rope(l);
      int first = c.windowed(l) ? c.slidingWindow().start(pos) : 0;
      float[] xb = rmsNorm(x, w.rmsAtt()[l]);
      float[] q = matvec(w.wq()[l], xb);
      float[] k = matvec(w.wk()[l], xb);
      float[] v = matvec(w.wv()[l], xb);
      if (c.qkvBias()) {
        add(q, w.bq()[l]);
        add(k, w.bk()[l]);
        add(v, w.bv()[l]);
      }
      if (c.qkNorm()) {
        q = headNorm(q, w.qNorm()[l]);
        k = headNorm(k, w.kNorm()[l]);
      }
      rope(q, pos, layerRope);
      rope(k, pos, layerRope);
      System.arraycopy(k, 0, keyCache[l], pos * kvDim, kvDim);
      System.arraycopy(v, 0, valueCache[l], pos * kvDim, kvDim);
      float[] out = new float[c.qDim()];
      for (int h = 0; h < c.heads(); h++) {
        int kvh = h / c.groupSize();
        float[] scores = new float[pos + 1 - first];
        for (int j = first; j <= pos; j++) {
          double s = 0;
          for (int i = 0; i < hd; i++) {
            s += (double) q[h * hd + i] * keyCache[l][j * kvDim + kvh * hd + i];
          }
          s *= c.attentionScale();
          double cap = c.attentionSoftCap();
          scores[j - first] = (float) (cap > 0 ? cap * Math.tanh(s / cap) : s);
        }
        softmax(scores);
        for (int j = first; j <= pos; j++) {
          for (int i = 0; i < hd; i++) {
            out[h * hd + i] += scores[j - first] * valueCache[l][j * kvDim + kvh * hd + i];
          }
        }
      }
      add(x, residual(postNorm(matvec(w.wo()[l], out), c.postNorms() ? w.postAttNorm()[l] : null)));
      xb = rmsNorm(x, w.rmsFfn()[l]);
      float[] gate = matvec(w.w1()[l], xb);
      float[] up = matvec(w.w3()[l], xb);
      for (int i = 0; i < gate.length; i++) {
        double g = gate[i];
        gate[i] =
            c.activation() == GatedActivation.GELU_TANH
                ? GeluTable.apply(gate[i]) * up[i]
                : (float) (g / (1 + Math.exp(-g)) * up[i]);
      }
      add(
          x,
          residual(postNorm(matvec(w.w2()[l], gate), c.postNorms() ? w.postFfnNorm()[l] : null)));
    }
    float[] logits = matvec(w.classifier(), rmsNorm(x, w.rmsFinal()));
    for (int i = 0; i < logits.length; i++) {
      logits[i] = (float) (logits[i] / (double) c.logitDivisor());
    }
    double cap = c.logitSoftCap();
    for (int i = 0; cap > 0 && i < logits.length; i++) {
      logits[i] = (float) (cap * Math.tanh(logits[i] / cap));
    }
    return logits;
  }

  /** A block's output as it joins the residual: times Granite's residual scale. */
  private float[] residual(float[] v) {
    for (int i = 0; i < v.length; i++) {
      v[i] = (float) (v[i] * (double) c.residualScale());
    }
    return v;
  }

  /** {@code v} RMS-normalised with {@code weight}, or {@code v} itself without one. */
  private float[] postNorm(float[] v, float[] weight) {
    return weight == null ? v : rmsNorm(v, weight);
  }

  private float[] row(WeightMatrix m, int r) {
    float[] out = new float[m.cols()];
    m.decodeRow(r, out, 0);
    return out;
  }

  private float[] matvec(WeightMatrix m, float[] in) {
    float[] out = new float[m.rows()];
    float[] r = new float[m.cols()];
    for (int o = 0; o < m.rows(); o++) {
      m.decodeRow(o, r, 0);
      double s = 0;
      for (int i = 0; i < r.length; i++) {
        s += (double) r[i] * in[i];
      }
      out[o] = (float) s;
    }
    return out;
  }

  private float[] rmsNorm(float[] x, float[] weight) {
    double ss = 0;
    for (float v : x) {
      ss += (double) v * v;
    }
    double scale = 1.0 / Math.sqrt(ss / x.length + c.normEps());
    float[] out = new float[x.length];
    for (int i = 0; i < x.length; i++) {
      out[i] = (float) (weight[i] * x[i] * scale);
    }
    return out;
  }

  /** Each head of {@code v} RMS-normalised with {@code weight}. */
  private float[] headNorm(float[] v, float[] weight) {
    int hd = c.headDim();
    float[] out = new float[v.length];
    for (int h = 0; h < v.length; h += hd) {
      float[] head = java.util.Arrays.copyOfRange(v, h, h + hd);
      System.arraycopy(rmsNorm(head, weight), 0, out, h, hd);
    }
    return out;
  }

  /** Pair i of each head, (2i, 2i+1) or with NEOX rope (i, i + hd/2), turned by pos * freq(i). */
  private void rope(float[] vec, int pos, RopeConfig rope) {
    int hd = c.headDim();
    boolean neox = rope.style() == RopeConfig.Style.NEOX;
    for (int h = 0; h < vec.length; h += hd) {
      for (int pair = 0; pair < hd / 2; pair++) {
        int a = h + (neox ? pair : 2 * pair);
        int b = a + (neox ? hd / 2 : 1);
        double angle = pos * rope.frequency(pair, hd);
        double cos = Math.cos(angle);
        double sin = Math.sin(angle);
        double v0 = vec[a];
        double v1 = vec[b];
        vec[a] = (float) (v0 * cos - v1 * sin);
        vec[b] = (float) (v0 * sin + v1 * cos);
      }
    }
  }

  private static void softmax(float[] s) {
    double max = Double.NEGATIVE_INFINITY;
    for (float v : s) {
      max = Math.max(max, v);
    }
    double sum = 0;
    for (int i = 0; i < s.length; i++) {
      double e = Math.exp(s[i] - max);
      s[i] = (float) e;
      sum += e;
    }
    for (int i = 0; i < s.length; i++) {
      s[i] = (float) (s[i] / sum);
    }
  }

  private static void add(float[] x, float[] y) {
    for (int i = 0; i < x.length; i++) {
      x[i] += y[i];
    }
  }
}
