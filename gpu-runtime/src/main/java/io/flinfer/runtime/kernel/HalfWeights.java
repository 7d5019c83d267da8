package io.flinfer.runtime.kernel;

import io.flinfer.memcache.HalfFloats;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import jdk.incubator.vector.FloatVector;

/**
 * A matrix of 16-bit floats (IEEE half or bfloat16) copied once onto the heap, where the Vector API
 * reads lanes from arrays much faster than from a mapped buffer. The values stay 16-bit; rows
 * become floats only in vector registers or in a row of scratch.
 */
public final class HalfWeights implements CompactWeights {
  private final short[] halves;
  private final boolean bf16;
  private final int cols;
  private final boolean finiteHalves;

  private HalfWeights(short[] halves, boolean bf16, int cols) {
    this.halves = halves;
    this.bf16 = bf16;
    this.cols = cols;
    // Checked once here so that the hot loops need not test every vector for them.
    this.finiteHalves = !bf16 && HalfVectors.hasNoSpecials(halves);
  }

  /** IEEE halves from little-endian {@code data}. */
  public static HalfWeights fp16(ByteBuffer data, int rows, int cols) {
    return new HalfWeights(copy(data, rows, cols), false, cols);
  }

  /** bfloat16 values from little-endian {@code data}. */
  public static HalfWeights bf16(ByteBuffer data, int rows, int cols) {
    return new HalfWeights(copy(data, rows, cols), true, cols);
  }

  private static short[] copy(ByteBuffer data, int rows, int cols) {
    short[] h = new short[Math.multiplyExact(rows, cols)];
    data.duplicate().order(ByteOrder.LITTLE_ENDIAN).asShortBuffer().get(h);
    return h;
  }

  int cols() {
    return cols;
  }

  short[] halves() {
    return halves;
  }

  boolean isBf16() {
    return bf16;
  }

  /** IEEE halves none of which is an infinity or a NaN. */
  boolean finiteHalves() {
    return finiteHalves;
  }

  /** The value at ({@code row}, {@code col}) as a float. */
  float value(int row, int col) {
    short h = halves[row * cols + col];
    return bf16 ? HalfFloats.fromBf16(h) : HalfFloats.fromHalf(h);
  }

  @Override
  public void multiplyToken(float[] x, float[] out, int oFrom, int oTo, float[] tmp) {
    HalfGemm.rows(this, x, out, oFrom, oTo, tmp);
  }

  @Override
  public boolean multiplyTokens(
      float[] x, int tokens, float[] out, int outStride, int oFrom, int oTo, float[] tmp) {
    if (!HalfQuadGemm.takes(this, tokens)) {
      return false;
    }
    HalfQuadGemm.rows(this, x, tokens, out, outStride, oFrom, oTo, tmp);
    return true;
  }

  /** Row {@code row} as floats into {@code dst[off..off + cols)}, converted in vector registers. */
  @Override
  public void decodeRow(int row, float[] dst, int off) {
    int base = row * cols;
    int i = 0;
    int lanes = GemmKernels.LANES;
    // Two vectors a turn: a batch decodes every row of every product once per step, and this
    // halves the loop's own instructions (index checks, safepoint poll): 7.5 -> 11.9 billion halves
    // a second on one core of an AVX-512 EPYC.
    int pairs = cols - cols % (2 * lanes);
    if (bf16) {
      for (; i < pairs; i += 2 * lanes) {
        FloatVector a = HalfVectors.bf16(halves, base + i);
        FloatVector b = HalfVectors.bf16(halves, base + i + lanes);
        a.intoArray(dst, off + i);
        b.intoArray(dst, off + i + lanes);
      }
      for (; i + lanes <= cols; i += lanes) {
        HalfVectors.bf16(halves, base + i).intoArray(dst, off + i);
      }
    } else if (finiteHalves) {
      for (; i < pairs; i += 2 * lanes) {
        FloatVector a = HalfVectors.fp16Finite(halves, base + i);
        FloatVector b = HalfVectors.fp16Finite(halves, base + i + lanes);
        a.intoArray(dst, off + i);
        b.intoArray(dst, off + i + lanes);
      }
      for (; i + lanes <= cols; i += lanes) {
        HalfVectors.fp16Finite(halves, base + i).intoArray(dst, off + i);
      }
    } else {
      for (; i + lanes <= cols; i += lanes) {
        HalfVectors.fp16(halves, base + i).intoArray(dst, off + i);
      }
    }
    for (; i < cols; i++) {
      dst[off + i] = value(row, i);
    }
  }
}
