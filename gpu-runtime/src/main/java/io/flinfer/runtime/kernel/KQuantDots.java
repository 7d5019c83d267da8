package io.flinfer.runtime.kernel;

import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.Vector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * Dot products of one K-quant row with one token's {@link Q8KActivations} in integers, as ggml
 * computes them: per super-block, {@code isum = sum_j scale_j * sum_i q_i * a_i} (and, for
 * Q4_K/Q5_K, {@code msum = sum_j min_j * sum_i a_i}) exactly in ints, then {@code sum += (d * da) *
 * isum - (dmin * da) * msum} in float, super-block after super-block. The integer sums are exact,
 * so the result does not depend on the vector width or on anything else in the batch.
 *
 * <p>Products of 4-6-bit weights and 8-bit activations fit in 16 bits, so each 16 values are one
 * 256-bit short multiply; sums of a sub-block are widened to ints before they are scaled. The row
 * is in {@link KQuantWeights}' heap layout: Q4_K/Q5_K blocks start with their 8 scales and 8 mins
 * unpacked to bytes; Q6_K blocks hold their 16 scales, then their values {@code q - 32} as bytes.
 */
public final class KQuantDots {
  private static final VectorSpecies<Byte> B16 = ByteVector.SPECIES_128;
  private static final VectorSpecies<Short> SHORTS = ShortVector.SPECIES_256;
  private static final VectorSpecies<Integer> INTS =
      IntVector.SPECIES_PREFERRED.length() >= 16 ? IntVector.SPECIES_512 : IntVector.SPECIES_256;
  private static final VectorSpecies<Integer> INTS8 = IntVector.SPECIES_256;
  private static final VectorSpecies<Byte> B8 = ByteVector.SPECIES_64;

  /**
   * Floats a decoded super-block takes ({@link #scaleMinFloats}, {@link #q6kFloats}), as a batch's
   * activations do ({@link Q8KActivations#floats}): 256 values, then 8 mins (sums of 32 values).
   */
  public static final int SPAN = 264;

  private KQuantDots() {}

  /** Sixteen bytes at {@code q[p]} sign-extended to shorts. */
  private static ShortVector shorts(byte[] q, int p) {
    return (ShortVector)
        ByteVector.fromArray(B16, q, p).convertShape(VectorOperators.B2S, SHORTS, 0);
  }

  /** The sixteen short lanes of {@code v} as ints, summed to {@link #INTS}' lanes. */
  private static IntVector widen(ShortVector v) {
    if (INTS.length() == 16) {
      return (IntVector) v.convertShape(VectorOperators.S2I, INTS, 0);
    }
    return ((IntVector) v.convertShape(VectorOperators.S2I, INTS, 0))
        .add((IntVector) v.convertShape(VectorOperators.S2I, INTS, 1));
  }

  private static ShortVector acts(short[] a, int i) {
    return ShortVector.fromArray(SHORTS, a, i);
  }

  /** Bit {@code j} of each lane moved to bit 4: Q5_K's fifth bits. */
  private static ShortVector fifth(ShortVector h, int j) {
    return h.lanewise(VectorOperators.ASHR, j).and((short) 1).lanewise(VectorOperators.LSHL, 4);
  }

  /**
   * Row of Q4_K ({@code fifthBits} false) or Q5_K super-blocks {@code k0..k0 + blocks} of {@code q}
   * (144 or 176 bytes each; {@code d, dmin} of block k at {@code s[2k], s[2k + 1]}) times token
   * {@code t} of {@code a}.
   */
  static float scaleMin(
      byte[] q, float[] s, int k0, int blocks, boolean fifthBits, Q8KActivations a, int t) {
    int bb = fifthBits ? 176 : 144;
    short[] av = a.values();
    int cb = a.cols() / 256;
    float sum = 0;
    for (int b = 0; b < blocks; b++) {
      int k = k0 + b;
      int p = k * bb;
      int qs = fifthBits ? p + 48 : p + 16;
      int x = (t * cb + b) * 256;
      IntVector acc = IntVector.zero(INTS);
      for (int g = 0; g < 4; g++) {
        int r = qs + 32 * g;
        int y = x + 64 * g;
        ShortVector n0 = shorts(q, r);
        ShortVector n1 = shorts(q, r + 16);
        ShortVector lo0 = n0.and((short) 0x0f);
        ShortVector lo1 = n1.and((short) 0x0f);
        ShortVector hi0 = n0.lanewise(VectorOperators.ASHR, 4).and((short) 0x0f);
        ShortVector hi1 = n1.lanewise(VectorOperators.ASHR, 4).and((short) 0x0f);
        if (fifthBits) {
          ShortVector h0 = shorts(q, p + 16);
          ShortVector h1 = shorts(q, p + 32);
          lo0 = lo0.or(fifth(h0, 2 * g));
          lo1 = lo1.or(fifth(h1, 2 * g));
          hi0 = hi0.or(fifth(h0, 2 * g + 1));
          hi1 = hi1.or(fifth(h1, 2 * g + 1));
        }
        ShortVector p0 = lo0.mul(acts(av, y)).add(lo1.mul(acts(av, y + 16)));
        ShortVector p1 = hi0.mul(acts(av, y + 32)).add(hi1.mul(acts(av, y + 48)));
        acc = acc.add(widen(p0).mul(q[p + 2 * g])).add(widen(p1).mul(q[p + 2 * g + 1]));
      }
      sum = combine(q, s, k, p, true, acc.reduceLanes(VectorOperators.ADD), a, t, b, sum);
    }
    return sum;
  }

  /**
   * Q4_K/Q5_K super-blocks {@code k0..k0 + blocks} of {@code q} as the integers {@code scale * q}
   * in floats (exact) into {@code dst[off..]}: a row of a batch's tile ({@link KQuantTile}),
   * decoded once for all its tokens.
   */
  static void scaleMinFloats(
      byte[] q, int k0, int blocks, boolean fifthBits, float[] dst, int off) {
    int bb = fifthBits ? 176 : 144;
    for (int b = 0; b < blocks; b++) {
      int p = (k0 + b) * bb;
      int r = (fifthBits ? p + 48 : p + 16);
      int o = off + SPAN * b;
      // Sixteen bytes (32 values of two sub-blocks) a turn: more written out, the vector calls
      // exceed what C2 inlines (node count) and the vectors would be boxed.
      for (int c = 0; c < 128; c += 16) {
        int g = c >> 5;
        ShortVector n = shorts(q, r + c);
        ShortVector lo = n.and((short) 0x0f);
        ShortVector hi = n.lanewise(VectorOperators.ASHR, 4).and((short) 0x0f);
        if (fifthBits) {
          ShortVector h = shorts(q, p + 16 + (c & 16));
          lo = lo.or(fifth(h, 2 * g));
          hi = hi.or(fifth(h, 2 * g + 1));
        }
        store(lo.mul((short) q[p + 2 * g]), dst, o + 64 * g + (c & 16));
        store(hi.mul((short) q[p + 2 * g + 1]), dst, o + 64 * g + 32 + (c & 16));
      }
      for (int j = 0; j < 8; j++) {
        dst[o + 256 + j] = q[p + 8 + j];
      }
    }
  }

  /**
   * Q6_K super-blocks as the integers {@code scale * (q - 32)} in floats into {@code dst[off..]}.
   */
  static void q6kFloats(byte[] q, int k0, int blocks, float[] dst, int off) {
    for (int b = 0; b < blocks; b++) {
      int p = (k0 + b) * 272;
      for (int g = 0; g < 16; g++) {
        store(shorts(q, p + 16 + 16 * g).mul((short) q[p + g]), dst, off + SPAN * b + 16 * g);
      }
    }
  }

  /** Sixteen short lanes as floats into {@code dst[o..o + 16)}. */
  private static void store(ShortVector v, float[] dst, int o) {
    for (int part = 0; part < 2; part++) {
      Vector<Integer> n = v.convertShape(VectorOperators.S2I, INTS8, part);
      ((FloatVector) n.convertShape(VectorOperators.I2F, FloatVector.SPECIES_256, 0))
          .intoArray(dst, o + 8 * part);
    }
  }

  /**
   * {@code sum} plus super-block {@code k}'s share, {@code b} the super-block within the row:
   * {@code (d * da) * isum - (dmin * da) * msum} for Q4_K/Q5_K ({@code s[2k], s[2k + 1]} are d and
   * dmin; msum from the mins at {@code q[p + 8..]}), {@code (d * da) * isum} for Q6_K ({@code mins}
   * false, d at {@code s[k]}). The one formula every K-quant product ends with.
   */
  static float combine(
      byte[] q,
      float[] s,
      int k,
      int p,
      boolean mins,
      int isum,
      Q8KActivations a,
      int t,
      int b,
      float sum) {
    int cb = a.cols() / 256;
    float da = a.scales()[t * cb + b];
    if (!mins) {
      return share(s, k, false, da, isum, 0, sum);
    }
    int msum =
        ((IntVector) ByteVector.fromArray(B8, q, p + 8).convertShape(VectorOperators.B2I, INTS8, 0))
            .mul(IntVector.fromArray(INTS8, a.sums(), (t * cb + b) * 8))
            .reduceLanes(VectorOperators.ADD);
    return share(s, k, true, da, isum, msum, sum);
  }

  /** {@code sum} plus super-block {@code k}'s share from its integer sums: the float formula. */
  private static float share(
      float[] s, int k, boolean mins, float da, int isum, int msum, float sum) {
    if (!mins) {
      return sum + (s[k] * da) * isum;
    }
    float d = s[2 * k] * da;
    float dmin = s[2 * k + 1] * da;
    return sum + (d * isum - dmin * msum);
  }

  /**
   * {@link #combine} over super-blocks {@code k0..k0 + blocks} with their integer sums at {@code
   * isums[off..]} and their mins' at {@code msums[off..]}: the same integers and float operations.
   */
  static float combineRow(
      float[] s,
      int k0,
      int blocks,
      boolean mins,
      int[] isums,
      int[] msums,
      int off,
      Q8KActivations a,
      int t) {
    int cb = a.cols() / 256;
    float[] ad = a.scales();
    float sum = 0;
    for (int b = 0; b < blocks; b++) {
      sum = share(s, k0 + b, mins, ad[t * cb + b], isums[off + b], msums[off + b], sum);
    }
    return sum;
  }

  /** As {@link #scaleMin}, value by value: the reference the vector kernel is tested against. */
  static float scaleMinReference(
      byte[] q, float[] s, int k0, int blocks, boolean fifthBits, Q8KActivations a, int t) {
    int bb = fifthBits ? 176 : 144;
    int cb = a.cols() / 256;
    float sum = 0;
    for (int b = 0; b < blocks; b++) {
      int k = k0 + b;
      int p = k * bb;
      int qs = fifthBits ? p + 48 : p + 16;
      int x = (t * cb + b) * 256;
      int isum = 0;
      int msum = 0;
      for (int j = 0; j < 8; j++) {
        int dot = 0;
        for (int l = 0; l < 32; l++) {
          int packed = q[qs + 32 * (j / 2) + l] & 0xff;
          int v = (j % 2 == 0) ? packed & 0x0f : packed >>> 4;
          if (fifthBits) {
            v |= ((q[p + 16 + l] >>> j) & 1) << 4;
          }
          dot += v * a.values()[x + 32 * j + l];
        }
        isum += q[p + j] * dot;
        msum += q[p + 8 + j] * a.sums()[(t * cb + b) * 8 + j];
      }
      float da = a.scales()[t * cb + b];
      float d = s[2 * k] * da;
      float dmin = s[2 * k + 1] * da;
      sum += d * isum - dmin * msum;
    }
    return sum;
  }

  /**
   * Row of Q6_K super-blocks {@code k0..k0 + blocks} of {@code q} (272 bytes each in the heap form;
   * d of block k at {@code s[k]}) times token {@code t} of {@code a}.
   */
  static float q6k(byte[] q, float[] s, int k0, int blocks, Q8KActivations a, int t) {
    short[] av = a.values();
    int cb = a.cols() / 256;
    float sum = 0;
    for (int b = 0; b < blocks; b++) {
      int k = k0 + b;
      int p = k * 272;
      int x = (t * cb + b) * 256;
      IntVector acc = IntVector.zero(INTS);
      for (int g = 0; g < 16; g++) {
        ShortVector v = shorts(q, p + 16 + 16 * g).mul(acts(av, x + 16 * g));
        acc = acc.add(widen(v).mul(q[p + g]));
      }
      sum = combine(q, s, k, p, false, acc.reduceLanes(VectorOperators.ADD), a, t, b, sum);
    }
    return sum;
  }

  /** As {@link #q6k}, value by value: the reference the vector kernel is tested against. */
  static float q6kReference(byte[] q, float[] s, int k0, int blocks, Q8KActivations a, int t) {
    int cb = a.cols() / 256;
    float sum = 0;
    for (int b = 0; b < blocks; b++) {
      int k = k0 + b;
      int p = k * 272;
      int x = (t * cb + b) * 256;
      int isum = 0;
      for (int g = 0; g < 16; g++) {
        int dot = 0;
        for (int l = 0; l < 16; l++) {
          dot += q[p + 16 + 16 * g + l] * a.values()[x + 16 * g + l];
        }
        isum += q[p + g] * dot;
      }
      sum += (s[k] * a.scales()[t * cb + b]) * isum;
    }
    return sum;
  }
}
