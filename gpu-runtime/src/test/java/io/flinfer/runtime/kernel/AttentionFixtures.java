package io.flinfer.runtime.kernel;

import io.flinfer.memcache.KvPool;
import java.util.Random;

/** What the attention kernel tests share: a plain double-precision reference and random data. */
final class AttentionFixtures {
  private AttentionFixtures() {}

  /** Softmax over the context in double, then the weighted sum of the values. */
  static float[] reference(KvPool kv, int[] table, float[] q, int qOff, int kvHead, int context) {
    return reference(kv, table, q, qOff, kvHead, context, 1 / Math.sqrt(kv.headDim()), 0);
  }

  /**
   * As {@link #reference}, each product times {@code scale} and soft-capped at {@code cap} (0:
   * not), in doubles.
   */
  static float[] reference(
      KvPool kv,
      int[] table,
      float[] q,
      int qOff,
      int kvHead,
      int context,
      double scale,
      double cap) {
    int hd = kv.headDim();
    float[] k = new float[hd];
    float[] v = new float[hd];
    double[] s = new double[context];
    double max = Double.NEGATIVE_INFINITY;
    for (int j = 0; j < context; j++) {
      kv.readKeys(0, table[j], kvHead * hd, hd, k, 0);
      double dot = 0;
      for (int i = 0; i < hd; i++) {
        dot += (double) q[qOff + i] * k[i];
      }
      s[j] = dot * scale;
      if (cap > 0) {
        s[j] = cap * Math.tanh(s[j] / cap);
      }
      max = Math.max(max, s[j]);
    }
    double sum = 0;
    for (int j = 0; j < context; j++) {
      s[j] = Math.exp(s[j] - max);
      sum += s[j];
    }
    double[] out = new double[hd];
    for (int j = 0; j < context; j++) {
      kv.readValues(0, table[j], kvHead * hd, hd, v, 0);
      for (int i = 0; i < hd; i++) {
        out[i] += s[j] / sum * v[i];
      }
    }
    float[] f = new float[hd];
    for (int i = 0; i < hd; i++) {
      f[i] = (float) out[i];
    }
    return f;
  }

  static int[] shuffledSlots(Random rnd, int n) {
    int[] a = new int[n];
    for (int i = 0; i < n; i++) {
      a[i] = i + 1;
    }
    for (int i = n - 1; i > 0; i--) {
      int j = rnd.nextInt(i + 1);
      int t = a[i];
      a[i] = a[j];
      a[j] = t;
    }
    return a;
  }

  static void fill(Random rnd, float[] a) {
    for (int i = 0; i < a.length; i++) {
      a[i] = (float) rnd.nextGaussian();
    }
  }
}
