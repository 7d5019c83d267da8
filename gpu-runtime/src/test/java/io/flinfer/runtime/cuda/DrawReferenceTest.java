package io.flinfer.runtime.cuda;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinfer.runtime.sampling.Sampler;
import io.flinfer.runtime.sampling.SamplingParams;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The device draw's reference keeps the tokens the sampling parameters define and draws them with
 * the host sampler's distribution (it walks them in index order where the host walks them from the
 * most likely down).
 */
class DrawReferenceTest {
  private static final float[][] PARAMS = DrawReference.PARAMS;

  @Test
  void keepsWhatMinPTopKAndTopPDefine() {
    Random rnd = new Random(3);
    for (int trial = 0; trial < 60; trial++) {
      float[] logits = gaussian(rnd, 500 + rnd.nextInt(3000), 1 + rnd.nextFloat() * 4);
      for (float[] q : PARAMS) {
        float[] p = DrawReference.probabilities(logits, q[0]);
        int lo = DrawReference.threshold(p, (int) q[1], q[2], q[3]);
        Set<Integer> kept = new HashSet<>();
        for (int i = 0; i < p.length; i++) {
          if (Float.floatToRawIntBits(p[i]) >= lo) {
            kept.add(i);
          }
        }
        assertThat(kept)
            .as("trial %d, params %s", trial, Arrays.toString(q))
            .isEqualTo(plain(p, q));
      }
    }
  }

  @Test
  void drawsWithTheHostSamplersDistribution() {
    Random rnd = new Random(11);
    float[] logits = gaussian(rnd, 64, 2f);
    Sampler sampler = new Sampler(logits.length);
    int draws = 100_000;
    for (float[] q : PARAMS) {
      SamplingParams params = DrawReference.params(q, 5);
      float[] p = DrawReference.probabilities(logits, q[0]);
      double[] host = new double[logits.length];
      double[] reference = new double[logits.length];
      Random u = new Random(17);
      for (int i = 0; i < draws; i++) {
        host[sampler.sample(logits, 0, params, new int[1], 1, 1, i, null)] += 1.0 / draws;
        reference[DrawReference.draw(p, (int) q[1], q[2], q[3], u.nextFloat())] += 1.0 / draws;
      }
      int lo = DrawReference.threshold(p, (int) q[1], q[2], q[3]);
      double total = 0;
      for (float v : p) {
        total += Float.floatToRawIntBits(v) >= lo ? DrawReference.weight(v) : 0;
      }
      double hostDistance = 0;
      double referenceDistance = 0;
      for (int t = 0; t < logits.length; t++) {
        double exact = Float.floatToRawIntBits(p[t]) >= lo ? DrawReference.weight(p[t]) / total : 0;
        hostDistance += Math.abs(host[t] - exact) / 2;
        referenceDistance += Math.abs(reference[t] - exact) / 2;
        if (host[t] > 0) {
          assertThat(exact)
              .as("token %d drawn by the host is kept, params %s", t, Arrays.toString(q))
              .isPositive();
        }
      }
      // Sampling noise alone: about 0.4 sqrt(kept / draws), under 0.01 here.
      assertThat(hostDistance)
          .as("host, total variation, params %s", Arrays.toString(q))
          .isLessThan(0.02);
      assertThat(referenceDistance)
          .as("reference, total variation, params %s", Arrays.toString(q))
          .isLessThan(0.02);
    }
  }

  /** The kept set by definition: sorted from the most likely, min-p, the first k, the nucleus. */
  private static Set<Integer> plain(float[] p, float[] q) {
    List<Integer> order = new ArrayList<>();
    for (int i = 0; i < p.length; i++) {
      if (p[i] > 0 && p[i] >= q[3]) {
        order.add(i);
      }
    }
    order.sort(Comparator.comparingDouble((Integer i) -> -p[i]));
    int k = (int) q[1];
    if (k > 0 && k < order.size()) {
      order = order.subList(0, k);
    }
    if (q[2] < 1f) {
      double total = 0;
      for (int i : order) {
        total += p[i];
      }
      double cum = 0;
      int keep = 0;
      while (keep < order.size()) {
        cum += p[order.get(keep++)];
        if (cum >= q[2] * total) {
          break;
        }
      }
      order = order.subList(0, keep);
    }
    return new HashSet<>(order);
  }

  private static float[] gaussian(Random rnd, int n, float scale) {
    float[] l = new float[n];
    for (int i = 0; i < n; i++) {
      l[i] = (float) rnd.nextGaussian() * scale;
    }
    return l;
  }
}
