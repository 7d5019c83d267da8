package io.flinfer.runtime.kernel;

import java.nio.ByteBuffer;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorMask;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * Eight 16-bit floats (IEEE half or bfloat16) or eight 8-bit integers converted to floats in vector
 * registers, from arrays or little-endian buffers. The conversions are exact: every half becomes
 * the float {@link io.flinfer.memcache.HalfFloats} gives (subnormals, infinities and NaNs
 * included), so a vector decoder computes what the scalar one does, bit for bit.
 */
public final class HalfVectors {
  public static final VectorSpecies<Float> S = FloatVector.SPECIES_256;
  private static final VectorSpecies<Short> S16 = ShortVector.SPECIES_128;
  private static final VectorSpecies<Integer> S32 = IntVector.SPECIES_256;
  private static final VectorSpecies<Byte> S8 = ByteVector.SPECIES_64;

  /**
   * The species of the row conversions. A conversion is exact at any width, but 512-bit vectors
   * measured slower end to end on an AVX-512 Xeon under JDK 17 (6.6 against 2.5 tokens/s at batch 1
   * on the Qwen2.5-0.5B shape in F16), so rows convert at 256 bits everywhere.
   */
  public static final VectorSpecies<Float> WIDE = FloatVector.SPECIES_256;

  private static final VectorSpecies<Integer> WIDE32 = IntVector.SPECIES_256;
  private static final VectorSpecies<Short> WIDE16 = ShortVector.SPECIES_128;
  private static final VectorSpecies<Byte> WIDE8 = ByteVector.SPECIES_64;

  /** Floats per wide conversion. */
  public static final int WIDE_LANES = WIDE.length();

  private HalfVectors() {}

  /** {@link #WIDE_LANES} IEEE halves at {@code byteOffset}, stored into {@code dst[off..]}. */
  public static void fp16Wide(ByteBuffer b, int byteOffset, float[] dst, int off) {
    IntVector h =
        (IntVector)
            BufferLoads.shorts(WIDE16, b, byteOffset).convertShape(VectorOperators.S2I, WIDE32, 0);
    fp16(h).intoArray(dst, off);
  }

  /** {@link #WIDE_LANES} bfloat16 values at {@code byteOffset}, stored into {@code dst[off..]}. */
  public static void bf16Wide(ByteBuffer b, int byteOffset, float[] dst, int off) {
    ((IntVector)
            BufferLoads.shorts(WIDE16, b, byteOffset).convertShape(VectorOperators.S2I, WIDE32, 0))
        .lanewise(VectorOperators.LSHL, 16)
        .reinterpretAsFloats()
        .intoArray(dst, off);
  }

  /**
   * {@link #WIDE_LANES} signed bytes at {@code byteOffset} times {@code scale}, stored into {@code
   * dst[off..]}.
   */
  public static void int8Wide(ByteBuffer b, int byteOffset, float scale, float[] dst, int off) {
    ((FloatVector)
            BufferLoads.bytes(WIDE8, b, byteOffset).convertShape(VectorOperators.B2F, WIDE, 0))
        .mul(scale)
        .intoArray(dst, off);
  }

  /** Eight IEEE halves at {@code byteOffset}. */
  public static FloatVector fp16(ByteBuffer b, int byteOffset) {
    return fp16(halves(b, byteOffset));
  }

  /** Eight bfloat16 values at {@code byteOffset}. */
  public static FloatVector bf16(ByteBuffer b, int byteOffset) {
    return halves(b, byteOffset).lanewise(VectorOperators.LSHL, 16).reinterpretAsFloats();
  }

  /** Eight signed bytes at {@code byteOffset}, as floats. */
  public static FloatVector int8(ByteBuffer b, int byteOffset) {
    return (FloatVector)
        BufferLoads.bytes(S8, b, byteOffset).convertShape(VectorOperators.B2F, S, 0);
  }

  /** 32 bytes at {@code byteOffset}. */
  public static ByteVector bytes32(ByteBuffer b, int byteOffset) {
    return BufferLoads.bytes(ByteVector.SPECIES_256, b, byteOffset);
  }

  /** 16 bytes at {@code byteOffset}. */
  public static ByteVector bytes16(ByteBuffer b, int byteOffset) {
    return BufferLoads.bytes(ByteVector.SPECIES_128, b, byteOffset);
  }

  /**
   * Lanes {@code 8 * part .. 8 * part + 7} of signed byte values, as floats times {@code scale}
   * minus {@code min} (one multiply-add, as the scalar {@code Math.fma(scale, q, -min)}), into
   * {@code dst}.
   */
  public static void scaled(ByteVector q, int part, float scale, float min, float[] dst, int off) {
    FloatVector v = (FloatVector) q.convertShape(VectorOperators.B2F, S, part);
    v.fma(scale, -min).intoArray(dst, off);
  }

  /** As {@link #scaled} without a min. */
  public static void scaled(ByteVector q, int part, float scale, float[] dst, int off) {
    FloatVector v = (FloatVector) q.convertShape(VectorOperators.B2F, S, part);
    v.mul(scale).intoArray(dst, off);
  }

  /** Eight IEEE halves of an array. */
  static FloatVector fp16(short[] a, int element) {
    return fp16(halves(a, element));
  }

  /**
   * Eight IEEE halves of an array that holds no infinity or NaN ({@link #hasNoSpecials}): the same
   * floats as {@link #fp16(short[], int)} without the test for them.
   */
  static FloatVector fp16Finite(short[] a, int element) {
    return fp16Moved(a, element).mul(HALF_TO_FLOAT);
  }

  /**
   * Eight IEEE halves of an array that holds no infinity or NaN, times 2^-112 (exact: the halves'
   * bits in a float's places): {@link #fp16Finite} without its product, for a product whose other
   * factor carries the 2^112 ({@link #scaledForMoved}).
   */
  static FloatVector fp16Moved(short[] a, int element) {
    return halves(a, element)
        .lanewise(VectorOperators.LSHL, 13)
        .and(0x8FFFE000)
        .reinterpretAsFloats();
  }

  /** The factor between a half's bits moved into a float's places and its value. */
  static final float HALF_TO_FLOAT = 0x1.0p112f;

  private static final ThreadLocal<float[]> SCALED = ThreadLocal.withInitial(() -> new float[0]);

  /**
   * {@code x[from..from + n)} times 2^112 in this thread's scratch, or null where a value's
   * magnitude reaches 2^16 or is not finite (its product would overflow). With every value below,
   * {@code fp16Moved(w) * scaled} is the same real number as {@code fp16Finite(w) * x}, so a
   * multiply-add rounds it to the same bits, and the conversion saves its product.
   */
  static float[] scaledForMoved(float[] x, int from, int n) {
    float[] dst = SCALED.get();
    if (dst.length < n) {
      dst = new float[n];
      SCALED.set(dst);
    }
    int i = 0;
    FloatVector max = FloatVector.zero(S);
    for (; i + S.length() <= n; i += S.length()) {
      FloatVector v = FloatVector.fromArray(S, x, from + i);
      // A NaN carries through the maxima and fails the bound below.
      max = max.max(v.abs());
      v.mul(HALF_TO_FLOAT).intoArray(dst, i);
    }
    float m = max.reduceLanes(VectorOperators.MAX);
    for (; i < n; i++) {
      m = Math.max(m, Math.abs(x[from + i]));
      dst[i] = x[from + i] * HALF_TO_FLOAT;
    }
    return m < 0x1.0p16f ? dst : null;
  }

  /** Whether no element of {@code a} is an IEEE half infinity or NaN (exponent bits all ones). */
  static boolean hasNoSpecials(short[] a) {
    int any = 0;
    for (short h : a) {
      // (exponent bits) + 0x400 reaches bit 15 only when they are all ones.
      any |= (h & 0x7C00) + 0x0400;
    }
    return (any & 0x8000) == 0;
  }

  /** Eight bfloat16 values of an array. */
  static FloatVector bf16(short[] a, int element) {
    return halves(a, element).lanewise(VectorOperators.LSHL, 16).reinterpretAsFloats();
  }

  /** Eight 16-bit values, sign-extended to ints. */
  private static IntVector halves(short[] a, int element) {
    return (IntVector)
        ShortVector.fromArray(S16, a, element).convertShape(VectorOperators.S2I, S32, 0);
  }

  private static IntVector halves(ByteBuffer b, int byteOffset) {
    return (IntVector)
        BufferLoads.shorts(S16, b, byteOffset).convertShape(VectorOperators.S2I, S32, 0);
  }

  /**
   * IEEE half to single, for halves sign-extended to int lanes: the sign and the magnitude's bits
   * moved to their places in a float, times 2^112 (exact for normals and subnormals alike, as the
   * product only shifts the exponent); infinities and NaNs, rare in weights, take another path.
   */
  static FloatVector fp16(IntVector h) {
    IntVector moved = h.lanewise(VectorOperators.LSHL, 13).and(0x8FFFE000);
    FloatVector v = moved.reinterpretAsFloats().mul(HALF_TO_FLOAT);
    VectorMask<Integer> special = moved.and(0x0F800000).compare(VectorOperators.EQ, 0x0F800000);
    if (!special.anyTrue()) {
      return v;
    }
    return v.reinterpretAsInts().blend(moved.or(0x7F800000), special).reinterpretAsFloats();
  }
}
