package io.flinfer.runtime.kernel;

import io.flinfer.memcache.HalfFloats;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * A matrix of 32-value blocks that share a scale (Q8_0, Q4_0), split for {@link BlockGemm}: the
 * blocks' integers exactly as the file stores them, row after row, and their fp16 scales as floats
 * (exact). Lives on the heap; the quantized values are never widened in memory.
 */
public final class BlockWeights implements CompactWeights {
  private final byte[] quants;
  private final float[] scales;
  private final boolean nibbles;
  private final int cols;

  private BlockWeights(byte[] quants, float[] scales, boolean nibbles, int cols) {
    this.quants = quants;
    this.scales = scales;
    this.nibbles = nibbles;
    this.cols = cols;
  }

  /** Q8_0 blocks (fp16 scale, 32 int8 values) from {@code data}. */
  public static BlockWeights q8(ByteBuffer data, int rows, int cols) {
    return split(data, rows, cols, false);
  }

  /** Q4_0 blocks (fp16 scale, 16 bytes of 4-bit pairs) from {@code data}. */
  public static BlockWeights q4(ByteBuffer data, int rows, int cols) {
    return split(data, rows, cols, true);
  }

  /**
   * Blocks of {@code format} (no offsets: Q5_0, IQ4_NL) from {@code data}, in the Q8_0 form: each
   * value as a signed byte, its block's d as a float.
   */
  public static BlockWeights of(ByteBlockFormat format, ByteBuffer data, int rows, int cols) {
    if (format.offsets || cols % BlockGemm.BLOCK != 0) {
      throw new IllegalArgumentException(
          format + " blocks of " + cols + " columns in the Q8_0 form");
    }
    ByteBuffer b = data.duplicate().order(ByteOrder.LITTLE_ENDIAN);
    int base = b.position();
    int blocks = rows * (cols / BlockGemm.BLOCK);
    byte[] quants = new byte[blocks * BlockGemm.BLOCK];
    float[] scales = new float[blocks];
    for (int k = 0; k < blocks; k++) {
      int p = base + k * format.blockBytes;
      scales[k] = HalfFloats.fromHalf(b.getShort(p));
      format.values(b, p, quants, k * BlockGemm.BLOCK);
    }
    return new BlockWeights(quants, scales, false, cols);
  }

  private static BlockWeights split(ByteBuffer data, int rows, int cols, boolean nibbles) {
    if (cols % BlockGemm.BLOCK != 0) {
      throw new IllegalArgumentException("columns must fill whole blocks: " + cols);
    }
    ByteBuffer b = data.duplicate().order(ByteOrder.LITTLE_ENDIAN);
    int base = b.position();
    int blocks = rows * (cols / BlockGemm.BLOCK);
    int qBytes = nibbles ? BlockGemm.BLOCK / 2 : BlockGemm.BLOCK;
    byte[] quants = new byte[blocks * qBytes];
    float[] scales = new float[blocks];
    for (int k = 0; k < blocks; k++) {
      int p = base + k * (2 + qBytes);
      scales[k] = HalfFloats.fromHalf(b.getShort(p));
      b.get(p + 2, quants, k * qBytes, qBytes);
    }
    return new BlockWeights(quants, scales, nibbles, cols);
  }

  int cols() {
    return cols;
  }

  byte[] quants() {
    return quants;
  }

  float[] scales() {
    return scales;
  }

  boolean nibbles() {
    return nibbles;
  }

  int blockBytes() {
    return nibbles ? BlockGemm.BLOCK / 2 : BlockGemm.BLOCK;
  }

  @Override
  public void multiplyToken(float[] x, float[] out, int oFrom, int oTo, float[] tmp) {
    BlockGemm.rows(this, x, out, oFrom, oTo, tmp);
  }

  @Override
  public boolean multiplyTokens(
      float[] x, int tokens, float[] out, int outStride, int oFrom, int oTo, float[] tmp) {
    if (!BlockQuadGemm.takes(this, tokens)) {
      return false;
    }
    BlockQuadGemm.rows(this, x, tokens, out, outStride, oFrom, oTo, tmp);
    return true;
  }

  /**
   * Row {@code row} as floats into {@code dst[off..off + cols)}, each {@code scale * value} rounded
   * once, converted in vector registers.
   */
  @Override
  public void decodeRow(int row, float[] dst, int off) {
    int blocks = cols / BlockGemm.BLOCK;
    int bb = blockBytes();
    for (int b = 0; b < blocks; b++) {
      int p = (row * blocks + b) * bb;
      float scale = scales[row * blocks + b];
      int o = off + b * BlockGemm.BLOCK;
      for (int j = 0; j < BlockGemm.BLOCK; j += 8) {
        BlockGemm.part(quants, p, j, nibbles).mul(scale).intoArray(dst, o + j);
      }
    }
  }
}
