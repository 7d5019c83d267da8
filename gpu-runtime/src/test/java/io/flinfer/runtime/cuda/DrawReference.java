package io.flinfer.runtime.cuda;

import io.flinfer.runtime.kernel.FastExp;
import io.flinfer.runtime.sampling.SamplingParams;
import java.util.Arrays;

/**
 * The device's draw ({@code sample_rows}) written plainly, for tests to compare the kernel with:
 * tempered probabilities by {@link FastExp}, weights in units of 2^-40, thresholds found by sorting
 * where the kernel selects them digit by digit, and the draw walking the kept tokens in index
 * order.
 */
final class DrawReference {
  /** Truncations the tests draw with: temperature, top-k, top-p, min-p. */
  static final float[][] PARAMS = {
    {1f, 0, 1f, 0f},
    {0.7f, 40, 1f, 0f},
    {0.9f, 0, 0.9f, 0f},
    {1.2f, 0, 1f, 0.05f},
    {0.8f, 20, 0.8f, 0.02f},
    {1f, 5, 0.5f, 0f},
    {0.6f, 1000, 0.95f, 0f},
    {2f, 0, 0.99f, 0f},
  };

  private DrawReference() {}

  /** A row of {@link #PARAMS} as sampling parameters with {@code seed}. */
  static SamplingParams params(float[] q, long seed) {
    return SamplingParams.builder()
        .temperature(q[0])
        .topK((int) q[1])
        .topP(q[2])
        .minP(q[3])
        .seed(seed)
        .build();
  }

  /** {@code p_i = exp((l_i - max) * (1 / temperature))}, as the kernel computes them. */
  static float[] probabilities(float[] logits, float temperature) {
    float max = Float.NEGATIVE_INFINITY;
    for (float l : logits) {
      max = Math.max(max, l);
    }
    float invT = 1f / temperature;
    float[] p = new float[logits.length];
    for (int i = 0; i < p.length; i++) {
      p[i] = FastExp.exp((logits[i] - max) * invT);
    }
    return p;
  }

  static long weight(float p) {
    return (long) (p * 0x1p40f);
  }

  /** The bits a kept probability is at least: min-p, the top-k-th value, then top-p's. */
  static int threshold(float[] p, int topK, float topP, float minP) {
    int lo = Math.max(1, Float.floatToRawIntBits(minP));
    int[] kept = descendingBitsFrom(p, lo);
    if (topK > 0 && topK < p.length && kept.length >= topK) {
      lo = Math.max(lo, kept[topK - 1]);
      kept = descendingBitsFrom(p, lo);
    }
    if (topP < 1f) {
      long total = 0;
      for (int b : kept) {
        total += weight(Float.intBitsToFloat(b));
      }
      long target = (long) Math.ceil((double) topP * (double) total);
      long acc = 0;
      for (int b : kept) {
        acc += weight(Float.intBitsToFloat(b));
        if (acc >= target) {
          lo = Math.max(lo, b);
          break;
        }
      }
    }
    return lo;
  }

  /** The token the kernel draws from probabilities {@code p} with {@code u}. */
  static int draw(float[] p, int topK, float topP, float minP, float u) {
    int lo = threshold(p, topK, topP, minP);
    long total = 0;
    for (float v : p) {
      if (Float.floatToRawIntBits(v) >= lo) {
        total += weight(v);
      }
    }
    long target = (long) ((double) u * (double) total);
    target = Math.min(target, total - 1);
    long run = 0;
    for (int i = 0; i < p.length; i++) {
      if (Float.floatToRawIntBits(p[i]) >= lo) {
        run += weight(p[i]);
        if (run > target) {
          return i;
        }
      }
    }
    throw new IllegalStateException("no kept token");
  }

  private static int[] descendingBitsFrom(float[] p, int lo) {
    return Arrays.stream(toBits(p))
        .filter(b -> b >= lo)
        .boxed()
        .sorted((a, b) -> Integer.compare(b, a))
        .mapToInt(Integer::intValue)
        .toArray();
  }

  private static int[] toBits(float[] p) {
    int[] bits = new int[p.length];
    for (int i = 0; i < p.length; i++) {
      bits[i] = Float.floatToRawIntBits(p[i]);
    }
    return bits;
  }
}
