package io.flinfer.runtime.kernel;

import io.flinfer.memcache.HalfFloats;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * A matrix of 32-value blocks with a scale and an offset each (Q4_1, Q5_1): value = d * q + m, the
 * product and the sum each rounded, as llama.cpp's reference dequantizes them. On the heap each
 * value is a byte, and d and m are floats. A token's product decodes each row once and multiplies
 * it as a batch's decoded rows are multiplied, so it gets their bits.
 */
public final class AffineBlockWeights implements CompactWeights {
  private static final VectorSpecies<Byte> B8 = ByteVector.SPECIES_64;
  private static final VectorSpecies<Integer> I8 = IntVector.SPECIES_256;

  private final byte[] quants;
  private final float[] scales;
  private final float[] offsets;
  private final int cols;

  private AffineBlockWeights(byte[] quants, float[] scales, float[] offsets, int cols) {
    this.quants = quants;
    this.scales = scales;
    this.offsets = offsets;
    this.cols = cols;
  }

  /** Blocks of {@code format} (with offsets: Q4_1, Q5_1) from {@code data}. */
  public static AffineBlockWeights of(ByteBlockFormat format, ByteBuffer data, int rows, int cols) {
    if (!format.offsets || cols % BlockGemm.BLOCK != 0) {
      throw new IllegalArgumentException(format + " blocks of " + cols + " columns with offsets");
    }
    ByteBuffer b = data.duplicate().order(ByteOrder.LITTLE_ENDIAN);
    int base = b.position();
    int blocks = Math.multiplyExact(rows, cols / BlockGemm.BLOCK);
    byte[] quants = new byte[Math.multiplyExact(blocks, BlockGemm.BLOCK)];
    float[] scales = new float[blocks];
    float[] offsets = new float[blocks];
    for (int k = 0; k < blocks; k++) {
      int p = base + k * format.blockBytes;
      scales[k] = HalfFloats.fromHalf(b.getShort(p));
      offsets[k] = HalfFloats.fromHalf(b.getShort(p + 2));
      format.values(b, p, quants, k * BlockGemm.BLOCK);
    }
    return new AffineBlockWeights(quants, scales, offsets, cols);
  }

  @Override
  public void decodeRow(int row, float[] dst, int off) {
    int blocks = cols / BlockGemm.BLOCK;
    for (int b = 0; b < blocks; b++) {
      int k = row * blocks + b;
      for (int j = 0; j < BlockGemm.BLOCK; j += 8) {
        chunk(quants, k * BlockGemm.BLOCK + j, scales[k], offsets[k])
            .intoArray(dst, off + b * BlockGemm.BLOCK + j);
      }
    }
  }

  /**
   * Eight values at {@code quants[p]} as {@code d * q + m}, the product and the sum each rounded.
   */
  private static FloatVector chunk(byte[] quants, int p, float d, float m) {
    return ((FloatVector)
            ((IntVector)
                    ByteVector.fromArray(B8, quants, p).convertShape(VectorOperators.B2I, I8, 0))
                .convertShape(VectorOperators.I2F, FloatVector.SPECIES_256, 0))
        .mul(d)
        .add(m);
  }

  /**
   * Two rows side by side, one from each half of the range, each in its own accumulator (as {@link
   * KQuantGemm} takes K-quant rows): a shorter second half repeats its last row.
   */
  @Override
  public void multiplyToken(float[] x, float[] out, int oFrom, int oTo, float[] tmp) {
    int half = (oTo - oFrom + 1) / 2;
    for (int o = oFrom; o < oFrom + half; o++) {
      int o1 = Math.min(o + half, oTo - 1);
      rows2(x, o, o1, tmp);
      out[o] = GemmKernels.sum8(tmp, 0);
      out[o1] = GemmKernels.sum8(tmp, 8);
    }
  }

  private void rows2(float[] x, int o0, int o1, float[] tmp) {
    int blocks = cols / BlockGemm.BLOCK;
    FloatVector a0 = FloatVector.zero(GemmKernels.S);
    FloatVector a1 = a0;
    for (int b = 0; b < blocks; b++) {
      int k0 = o0 * blocks + b;
      int k1 = o1 * blocks + b;
      float d0 = scales[k0];
      float m0 = offsets[k0];
      float d1 = scales[k1];
      float m1 = offsets[k1];
      for (int j = 0; j < BlockGemm.BLOCK; j += 8) {
        FloatVector xv = FloatVector.fromArray(GemmKernels.S, x, b * BlockGemm.BLOCK + j);
        a0 = chunk(quants, k0 * BlockGemm.BLOCK + j, d0, m0).fma(xv, a0);
        a1 = chunk(quants, k1 * BlockGemm.BLOCK + j, d1, m1).fma(xv, a1);
      }
    }
    a0.intoArray(tmp, 0);
    a1.intoArray(tmp, 8);
  }
}
