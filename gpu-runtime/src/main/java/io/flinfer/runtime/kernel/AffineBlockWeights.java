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
  private static final ThreadLocal<float[]> ROW = ThreadLocal.withInitial(() -> new float[0]);

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

  /** Q4_1 blocks (fp16 d and m, 16 bytes of nibbles: values 0..15 low, 16..31 high). */
  public static AffineBlockWeights q41(ByteBuffer data, int rows, int cols) {
    return read(data, rows, cols, 20, AffineBlockWeights::q41Values);
  }

  /** Q5_1 blocks (fp16 d and m, 32 fifth bits as a little-endian int, 16 bytes of nibbles). */
  public static AffineBlockWeights q51(ByteBuffer data, int rows, int cols) {
    return read(data, rows, cols, 24, AffineBlockWeights::q51Values);
  }

  /** The 32 values of the Q4_1 block at {@code b[p..]} into {@code dst[o..]}. */
  public static void q41Values(ByteBuffer b, int p, byte[] dst, int o) {
    for (int j = 0; j < 16; j++) {
      int packed = b.get(p + 4 + j);
      dst[o + j] = (byte) (packed & 0x0f);
      dst[o + 16 + j] = (byte) ((packed >>> 4) & 0x0f);
    }
  }

  /**
   * The 32 values of the Q5_1 block at {@code b[p..]} into {@code dst[o..]}: value j's low nibble
   * is in byte {@code 8 + j % 16} (high nibble for j >= 16), its fifth bit is bit j of the int at
   * 4.
   */
  public static void q51Values(ByteBuffer b, int p, byte[] dst, int o) {
    int high = b.getInt(p + 4);
    for (int j = 0; j < 16; j++) {
      int packed = b.get(p + 8 + j);
      dst[o + j] = (byte) ((packed & 0x0f) | ((high >>> j) & 1) << 4);
      dst[o + 16 + j] = (byte) (((packed >>> 4) & 0x0f) | ((high >>> (j + 16)) & 1) << 4);
    }
  }

  private static AffineBlockWeights read(
      ByteBuffer data, int rows, int cols, int blockBytes, BlockWeights.BlockValues values) {
    if (cols % BlockGemm.BLOCK != 0) {
      throw new IllegalArgumentException("columns must fill whole blocks: " + cols);
    }
    ByteBuffer b = data.duplicate().order(ByteOrder.LITTLE_ENDIAN);
    int base = b.position();
    int blocks = Math.multiplyExact(rows, cols / BlockGemm.BLOCK);
    byte[] quants = new byte[Math.multiplyExact(blocks, BlockGemm.BLOCK)];
    float[] scales = new float[blocks];
    float[] offsets = new float[blocks];
    for (int k = 0; k < blocks; k++) {
      int p = base + k * blockBytes;
      scales[k] = HalfFloats.fromHalf(b.getShort(p));
      offsets[k] = HalfFloats.fromHalf(b.getShort(p + 2));
      values.values(b, p, quants, k * BlockGemm.BLOCK);
    }
    return new AffineBlockWeights(quants, scales, offsets, cols);
  }

  @Override
  public void decodeRow(int row, float[] dst, int off) {
    int blocks = cols / BlockGemm.BLOCK;
    for (int b = 0; b < blocks; b++) {
      int k = row * blocks + b;
      float d = scales[k];
      float m = offsets[k];
      for (int j = 0; j < BlockGemm.BLOCK; j += 8) {
        ((FloatVector)
                ((IntVector)
                        ByteVector.fromArray(B8, quants, k * BlockGemm.BLOCK + j)
                            .convertShape(VectorOperators.B2I, I8, 0))
                    .convert(VectorOperators.I2F, 0))
            .mul(d)
            .add(m)
            .intoArray(dst, off + b * BlockGemm.BLOCK + j);
      }
    }
  }

  @Override
  public void multiplyToken(float[] x, float[] out, int oFrom, int oTo, float[] tmp) {
    float[] row = ROW.get();
    if (row.length < cols) {
      row = new float[cols];
      ROW.set(row);
    }
    for (int o = oFrom; o < oTo; o++) {
      decodeRow(o, row, 0);
      Gemm.rows1(row, 0, cols, x, 1, out, 0, o, tmp);
    }
  }
}
