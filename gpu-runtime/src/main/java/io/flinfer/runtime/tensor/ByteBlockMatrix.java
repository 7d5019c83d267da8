package io.flinfer.runtime.tensor;

import io.flinfer.memcache.HalfFloats;
import io.flinfer.runtime.kernel.ActivationRounding;
import io.flinfer.runtime.kernel.AffineBlockWeights;
import io.flinfer.runtime.kernel.BlockWeights;
import io.flinfer.runtime.kernel.ByteBlockFormat;
import java.nio.ByteBuffer;

/**
 * A matrix of 32-value blocks held on the heap as a byte per value ({@link ByteBlockFormat}): Q5_0
 * and IQ4_NL in the Q8_0 form, so that the Q8_0 kernels multiply them (1.6 and 1.9 times the file's
 * size), Q4_1 and Q5_1 with their offsets ({@link AffineBlockWeights}; 2 and 1.7 times).
 */
final class ByteBlockMatrix extends CompactMatrix {
  private final GgmlType type;
  private final ByteBlockFormat format;

  /** Q4_1 and Q5_1: each block's offset m; else null. */
  private final float[] offsets;

  ByteBlockMatrix(GgmlType type, ByteBuffer data, int rows, int cols) {
    this(type, ByteBlockFormat.valueOf(type.name()), data, rows, cols);
  }

  private ByteBlockMatrix(
      GgmlType type, ByteBlockFormat format, ByteBuffer data, int rows, int cols) {
    super(
        data,
        rows,
        cols,
        // The heap form: a byte per value, and d (and m) as floats; the budget counts it.
        (long) rows * (cols / 32) * (32 + (format.offsets ? 8 : 4)),
        format.offsets
            ? (d, r, c) -> AffineBlockWeights.of(format, d, r, c)
            : (d, r, c) -> BlockWeights.of(format, d, r, c),
        (d, c, row, dst, off) -> decode(format, d, c, row, dst, off),
        type.ggmlActivations());
    this.type = type;
    this.format = format;
    this.offsets = format.offsets ? offsets(format, this.data, rows, cols) : null;
  }

  /** Each block's offset m, row-major: what the {@code q8_1} corrections multiply. */
  private static float[] offsets(ByteBlockFormat format, ByteBuffer data, int rows, int cols) {
    int blocks = rows * (cols / 32);
    float[] m = new float[blocks];
    for (int k = 0; k < blocks; k++) {
      m[k] = HalfFloats.fromHalf(data.getShort(k * format.blockBytes + 2));
    }
    return m;
  }

  /**
   * The product of the rounded values, then, for Q4_1 and Q5_1 under {@code q8_1}, each output's
   * offsets times its token's block corrections, block after block ({@link
   * ActivationRounding#Q8_1}): the offsets meet ggml's {@code s} instead of the rounded values'
   * sum. The same after every kernel, so the bits still do not depend on the batch.
   */
  @Override
  public void matmulRounded(
      float[] x, int tokens, float[] out, int outStride, int oFrom, int oTo, float[] scratch) {
    super.matmulRounded(x, tokens, out, outStride, oFrom, oTo, scratch);
    if (offsets == null || activationRounding() != ActivationRounding.Q8_1) {
      return;
    }
    int blocks = cols / 32;
    int at = ActivationRounding.corrections(tokens * cols);
    for (int t = 0; t < tokens; t++) {
      for (int o = oFrom; o < oTo; o++) {
        float c = 0;
        for (int b = 0; b < blocks; b++) {
          c += offsets[o * blocks + b] * x[at + t * blocks + b];
        }
        out[t * outStride + o] += c;
      }
    }
  }

  @Override
  public GgmlType type() {
    return type;
  }

  @Override
  public void decodeRowReference(int row, float[] dst, int off) {
    decode(format, data, cols, row, dst, off);
  }

  /**
   * Row {@code row} of the blocks, value by value, {@code d * q} or {@code d * q + m}: the
   * reference, and the mapped rows (the heap copy's bits).
   */
  private static void decode(
      ByteBlockFormat format, ByteBuffer data, int cols, int row, float[] dst, int off) {
    int blocks = cols / 32;
    int base = row * blocks * format.blockBytes;
    for (int b = 0; b < blocks; b++) {
      int p = base + b * format.blockBytes;
      float d = HalfFloats.fromHalf(data.getShort(p));
      float m = format.offsets ? HalfFloats.fromHalf(data.getShort(p + 2)) : 0;
      for (int j = 0; j < 32; j++) {
        float v = d * format.value(data, p, j);
        dst[off + b * 32 + j] = format.offsets ? v + m : v;
      }
    }
  }
}
