package io.flinfer.runtime.kernel;

import io.flinfer.memcache.HalfFloats;
import java.util.Arrays;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * How a matrix's activations are rounded before its products. ggml multiplies quantized weights
 * with activations it has quantized to 8 bits per block ({@code q8_0}: 32 values and an fp16 scale;
 * {@code q8_K}: 256 values and a float scale), so its logits carry that rounding; a model whose
 * products take the activations unrounded drifts from llama.cpp's by several percent and picks
 * other tokens where the margin is small. Rounding them the same way, each value to {@code scale *
 * q}, and multiplying in floats brings the products to within float rounding of ggml's integer
 * sums. Half-precision and bfloat16 weights take activations converted to their own type.
 *
 * <p>A token's rounding depends on that token's values alone, so a token keeps its bits alone and
 * in any batch. The CPU forward pass rounds each product's input once for the products that share
 * it (q, k and v; gate and up) and all their threads, split between the threads, into buffers of
 * its own ({@link #round}); {@link io.flinfer.runtime.tensor.WeightMatrix#matmul} rounds into this
 * thread's buffer, which keeps the last input and its result ({@link #apply}).
 */
public enum ActivationRounding {
  /** Activations as they come (float weights). */
  NONE(1),
  /** ggml's {@code F16} activations for half-precision weights: each value to the nearest fp16. */
  F16(1),
  /** ggml's {@code BF16} activations for bfloat16 weights: each value to the nearest bf16. */
  BF16(1),
  /** ggml's {@code q8_0}: 32 values, scale {@code max / 127} in fp16. */
  Q8_0(32),
  /**
   * ggml's {@code q8_1}: {@code q8_0}'s values, and each block's {@code s = fp16(d * sum q)} (d
   * before its fp16 rounding), which ggml multiplies with the weights' offsets (Q4_1, Q5_1). The
   * buffer carries, after the values, a correction per block: {@code s - fp16(d) * sum q}, what the
   * offsets' products must add to the float products of the rounded values ({@link #corrections}).
   */
  Q8_1(32),
  /** ggml's {@code q8_K}: 256 values, scale {@code max / -127} as a float. */
  Q8_K(256);

  private static final VectorSpecies<Float> S = FloatVector.SPECIES_256;
  private static final int L = S.length();

  /** 1.5 * 2^23: added to and taken from a float within 2^22, it rounds it to an integer. */
  private static final float MAGIC = 12582912f;

  /** The system property that turns the rounding off ({@code f32}); {@code ggml} is the default. */
  public static final String PROPERTY = "flinfer.activations";

  private final int block;
  private final ThreadLocal<Cache> cache = ThreadLocal.withInitial(Cache::new);

  ActivationRounding(int block) {
    this.block = block;
  }

  /** Values a scale covers. */
  public int block() {
    return block;
  }

  /**
   * This rounding, or {@link #NONE} where {@link #PROPERTY} says {@code f32}; an unknown value is
   * an error, as a silent default would change every product.
   */
  public ActivationRounding asConfigured() {
    String v = System.getProperty(PROPERTY, "ggml");
    if (v.equals("f32")) {
      return NONE;
    }
    if (!v.equals("ggml")) {
      throw new IllegalArgumentException(PROPERTY + " must be ggml or f32, not " + v);
    }
    return this;
  }

  /**
   * The first {@code n} values of {@code x} rounded (x itself for {@link #NONE}), in this thread's
   * buffer: valid until this thread's next call for this rounding. {@code n} must be a multiple of
   * {@link #block}.
   */
  public float[] apply(float[] x, int n) {
    if (this == NONE) {
      return x;
    }
    if (n % block != 0) {
      throw new IllegalArgumentException(this + " rounds whole blocks of " + block + ": " + n);
    }
    Cache c = cache.get();
    if (c.n == n && Arrays.equals(x, 0, n, c.source, 0, n)) {
      return c.rounded;
    }
    if (c.source.length < n) {
      c.source = new float[n];
      c.rounded = new float[bufferSize(n)];
    }
    System.arraycopy(x, 0, c.source, 0, n);
    c.n = n;
    round(x, 0, n, c.rounded, n);
    return c.rounded;
  }

  /** Floats a buffer of {@code n} rounded values takes: {@link #Q8_1} adds its corrections. */
  public int bufferSize(int n) {
    return this == Q8_1 ? n + n / 32 : n;
  }

  /**
   * Where block {@code b} of a {@link #Q8_1} buffer of {@code n} values keeps its correction:
   * {@code s - fp16(d) * sum q}, with {@code s = fp16(d * sum q)} as ggml stores it.
   */
  public static int corrections(int n) {
    return n;
  }

  /**
   * Values [from, to) of {@code x} rounded into the same places of {@code dst} (of {@link
   * #bufferSize}({@code n}) floats, {@code n} the values of the whole input); both multiples of
   * {@link #block}. No buffer: for callers that keep their own and split the work.
   */
  public void round(float[] x, int from, int to, float[] dst, int n) {
    if (from % block != 0 || to % block != 0) {
      throw new IllegalArgumentException(this + " rounds whole blocks of " + block);
    }
    if (this == F16 || this == BF16) {
      sixteenBit(this == F16, x, from, to, dst);
      return;
    }
    for (int off = from; off < to; off += block) {
      switch (this) {
        case Q8_0 -> q8_0(x, off, dst);
        case Q8_1 -> dst[corrections(n) + off / 32] = q8_1(x, off, dst);
        case Q8_K -> q8K(x, off, dst);
        default -> System.arraycopy(x, off, dst, off, block);
      }
    }
  }

  /** The largest float below the smallest normal half, 2^-14, as bits. */
  private static final int HALF_NORMAL = 0x38800000;

  /** 65536 as bits: a value that rounds to it is beyond the largest half, 65504. */
  private static final int HALF_OVERFLOW = 0x47800000;

  /**
   * {@code x[from..to)} rounded to the nearest fp16 or bf16 (ties to even, as F16C and ggml's
   * {@code ggml_compute_fp32_to_bf16} round) and back, in vectors: a normal half keeps 10 of the
   * float's 23 mantissa bits (bf16 7), a subnormal half is a multiple of 2^-24 (adding and taking
   * away 0.5 rounds a value below 2^-14 to one), past 65504 a half is infinite; NaN and infinities
   * stay (a bf16 NaN quiet, as ggml makes it).
   */
  static void sixteenBit(boolean half, float[] x, int from, int to, float[] dst) {
    int i = from;
    for (; i + L <= to; i += L) {
      IntVector b = FloatVector.fromArray(S, x, i).reinterpretAsInts();
      IntVector r;
      if (half) {
        IntVector sign = b.and(0x80000000);
        IntVector a = b.and(0x7fffffff);
        r = a.add(a.lanewise(VectorOperators.LSHR, 13).and(1)).add(0xfff).and(~0x1fff);
        r = r.blend(0x7f800000, r.compare(VectorOperators.GE, HALF_OVERFLOW));
        FloatVector small = a.reinterpretAsFloats().add(0.5f).sub(0.5f);
        r = r.blend(small.reinterpretAsInts(), a.compare(VectorOperators.LT, HALF_NORMAL));
        r = r.blend(a, a.compare(VectorOperators.GE, 0x7f800000)).or(sign);
      } else {
        r = b.add(b.lanewise(VectorOperators.LSHR, 16).and(1)).add(0x7fff).and(0xffff0000);
        IntVector nan = b.and(0xffff0000).or(0x00400000);
        r = r.blend(nan, b.and(0x7fffffff).compare(VectorOperators.GT, 0x7f800000));
      }
      r.reinterpretAsFloats().intoArray(dst, i);
    }
    for (; i < to; i++) {
      dst[i] = half ? halfReference(x[i]) : bf16Reference(x[i]);
    }
  }

  /** The nearest fp16 of {@code v}: the reference {@link #sixteenBit} is held to. */
  static float halfReference(float v) {
    return HalfFloats.fromHalf(HalfFloats.toHalf(v));
  }

  /** ggml's {@code ggml_compute_fp32_to_bf16}, back to a float. */
  static float bf16Reference(float v) {
    int u = Float.floatToRawIntBits(v);
    if ((u & 0x7fffffff) > 0x7f800000) {
      return Float.intBitsToFloat((u & 0xffff0000) | 0x00400000);
    }
    u += 0x7fff + ((u >>> 16) & 1);
    return Float.intBitsToFloat(u & 0xffff0000);
  }

  /**
   * {@link #q8_0}'s values into {@code dst}, and the block's correction for the offsets' products:
   * ggml's {@code s} (its x86 {@code quantize_row_q8_1}: {@code fp16(d * sum q)} with the unrounded
   * d) less what the rounded values sum to ({@code fp16(d) * sum q}, exact in a float).
   */
  static float q8_1(float[] x, int off, float[] dst) {
    float amax = q8_0(x, off, dst);
    float d = amax / 127f;
    float dh = HalfFloats.fromHalf(HalfFloats.toHalf(d));
    if (dh == 0) {
      return 0;
    }
    int sum = 0;
    for (int i = off; i < off + 32; i++) {
      sum += Math.round(dst[i] / dh);
    }
    return HalfFloats.fromHalf(HalfFloats.toHalf(d * sum)) - dh * sum;
  }

  /**
   * ggml's x86 {@code quantize_row_q8_0} on {@code x[off..off + 32)}, each value back as {@code
   * fp16(d) * q}: {@code d = max|x| / 127}, {@code q = rint(x * (127 / max|x|))}, ties to even. In
   * vectors: the maximum is exact in any order, and {@code rint} is adding and taking away 1.5 *
   * 2^23, exact below 2^22 (the products are at most 127). Returns the block's max|x|.
   */
  static float q8_0(float[] x, int off, float[] dst) {
    FloatVector v0 = FloatVector.fromArray(S, x, off);
    FloatVector v1 = FloatVector.fromArray(S, x, off + L);
    FloatVector v2 = FloatVector.fromArray(S, x, off + 2 * L);
    FloatVector v3 = FloatVector.fromArray(S, x, off + 3 * L);
    float amax =
        v0.abs().max(v1.abs()).max(v2.abs().max(v3.abs())).reduceLanes(VectorOperators.MAX);
    float d = HalfFloats.fromHalf(HalfFloats.toHalf(amax / 127f));
    float id = amax != 0 ? 127f / amax : 0;
    rounded(v0, id, d).intoArray(dst, off);
    rounded(v1, id, d).intoArray(dst, off + L);
    rounded(v2, id, d).intoArray(dst, off + 2 * L);
    rounded(v3, id, d).intoArray(dst, off + 3 * L);
    return amax;
  }

  /** {@code d * rint(v * id)}, {@code v * id} within 2^22 in magnitude. */
  private static FloatVector rounded(FloatVector v, float id, float d) {
    return v.mul(id).add(MAGIC).sub(MAGIC).mul(d);
  }

  /**
   * {@link #q8_0} value by value, as ggml writes it: the reference the vector code is held to. Each
   * q is an integer, so a value rounded to 0 is d * +0, as in ggml's integer products.
   */
  static void q8_0Reference(float[] x, int off, float[] dst) {
    float amax = 0;
    for (int i = off; i < off + 32; i++) {
      amax = Math.max(amax, Math.abs(x[i]));
    }
    float d = HalfFloats.fromHalf(HalfFloats.toHalf(amax / 127f));
    float id = amax != 0 ? 127f / amax : 0;
    for (int i = off; i < off + 32; i++) {
      dst[i] = d * (int) Math.rint(x[i] * id);
    }
  }

  /**
   * ggml's {@code quantize_row_q8_K} on {@code x[off..off + 256)}, each value back as d * q: the
   * scale {@code max / -127} for the signed value {@code max} of largest magnitude (the first such,
   * where both signs have it), {@code q = rint(x * -127 / max)} capped at 127 (ties to even).
   */
  static void q8K(float[] x, int off, float[] dst) {
    FloatVector hi = FloatVector.fromArray(S, x, off);
    FloatVector lo = hi;
    for (int i = off + L; i < off + 256; i += L) {
      FloatVector v = FloatVector.fromArray(S, x, i);
      hi = hi.max(v);
      lo = lo.min(v);
    }
    float top = hi.reduceLanes(VectorOperators.MAX);
    float bottom = lo.reduceLanes(VectorOperators.MIN);
    float max = top > -bottom ? top : -bottom > top ? bottom : firstOfMagnitude(x, off, top);
    if (max == 0 || max != max) {
      // All zero (or a NaN, which ggml's scan never picks as the maximum): ggml's scale is 0.
      q8KReference(x, off, dst);
      return;
    }
    float iscale = -127f / max;
    float d = 1 / iscale;
    for (int i = off; i < off + 256; i += L) {
      FloatVector q = FloatVector.fromArray(S, x, i).mul(iscale).add(MAGIC).sub(MAGIC);
      q.min(127f).mul(d).intoArray(dst, i);
    }
  }

  /** The first value of {@code x[off..off + 256)} whose magnitude is {@code amax}. */
  private static float firstOfMagnitude(float[] x, int off, float amax) {
    for (int i = off; i < off + 256; i++) {
      if (Math.abs(x[i]) == amax) {
        return x[i];
      }
    }
    return amax;
  }

  /** {@link #q8K} value by value, as ggml writes it: the reference the vector code is held to. */
  static void q8KReference(float[] x, int off, float[] dst) {
    float max = 0;
    float amax = 0;
    for (int i = off; i < off + 256; i++) {
      float ax = Math.abs(x[i]);
      if (ax > amax) {
        amax = ax;
        max = x[i];
      }
    }
    if (amax == 0) {
      Arrays.fill(dst, off, off + 256, 0f);
      return;
    }
    float iscale = -127f / max;
    float d = 1 / iscale;
    for (int i = off; i < off + 256; i++) {
      dst[i] = d * Math.min(127, (int) Math.rint(iscale * x[i]));
    }
  }

  private static final class Cache {
    float[] source = new float[0];
    float[] rounded = new float[0];
    int n = -1;
  }
}
