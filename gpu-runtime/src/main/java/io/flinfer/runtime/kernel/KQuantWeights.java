package io.flinfer.runtime.kernel;

import io.flinfer.memcache.HalfFloats;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * A K-quant matrix (Q4_K, Q5_K, Q6_K) copied onto the heap as the file packs it, with each
 * super-block's fp16 scales read once into floats (exact). The values stay 4, 5 or 6 bits; rows
 * become floats only in vector registers ({@link KQuantGemm}) or in a row of scratch for a batch.
 */
public final class KQuantWeights implements CompactWeights {
  /** The formats, by how a super-block's values are scaled. */
  enum Format {
    /** Q4_K: d * scale * q - dmin * min, 4-bit q, 144 bytes a super-block. */
    Q4_K(144, 2),
    /** Q5_K: as Q4_K with a fifth bit per value, 176 bytes a super-block. */
    Q5_K(176, 2),
    /** Q6_K: d * scale * (q - 32), 6-bit q, signed 8-bit scales of 16 values, 210 bytes. */
    Q6_K(210, 1);

    final int blockBytes;
    final int scalesPerBlock;

    Format(int blockBytes, int scalesPerBlock) {
      this.blockBytes = blockBytes;
      this.scalesPerBlock = scalesPerBlock;
    }
  }

  static final int SUPER = 256;

  private final Format format;
  private final byte[] bytes;
  private final float[] scales;
  private final int cols;

  private KQuantWeights(Format format, byte[] bytes, float[] scales, int cols) {
    this.format = format;
    this.bytes = bytes;
    this.scales = scales;
    this.cols = cols;
  }

  /** Q4_K super-blocks from {@code data}. */
  public static KQuantWeights q4k(ByteBuffer data, int rows, int cols) {
    return copy(Format.Q4_K, data, rows, cols);
  }

  /** Q5_K super-blocks from {@code data}. */
  public static KQuantWeights q5k(ByteBuffer data, int rows, int cols) {
    return copy(Format.Q5_K, data, rows, cols);
  }

  /** Q6_K super-blocks from {@code data}. */
  public static KQuantWeights q6k(ByteBuffer data, int rows, int cols) {
    return copy(Format.Q6_K, data, rows, cols);
  }

  private static KQuantWeights copy(Format format, ByteBuffer data, int rows, int cols) {
    if (cols % SUPER != 0) {
      throw new IllegalArgumentException("columns must fill whole super-blocks: " + cols);
    }
    ByteBuffer b = data.duplicate().order(ByteOrder.LITTLE_ENDIAN);
    int blocks = Math.multiplyExact(rows, cols / SUPER);
    byte[] bytes = new byte[Math.multiplyExact(blocks, format.blockBytes)];
    b.get(b.position(), bytes, 0, bytes.length);
    float[] scales = new float[blocks * format.scalesPerBlock];
    for (int k = 0; k < blocks; k++) {
      int p = b.position() + k * format.blockBytes;
      if (format == Format.Q6_K) {
        scales[k] = HalfFloats.fromHalf(b.getShort(p + 208));
      } else {
        scales[2 * k] = HalfFloats.fromHalf(b.getShort(p));
        scales[2 * k + 1] = HalfFloats.fromHalf(b.getShort(p + 2));
      }
    }
    return new KQuantWeights(format, bytes, scales, cols);
  }

  Format format() {
    return format;
  }

  byte[] bytes() {
    return bytes;
  }

  float[] scales() {
    return scales;
  }

  int cols() {
    return cols;
  }

  /** Blocks: as {@link BlockWeights}, a one-token product is bound by its multiply-add chain. */
  @Override
  public boolean pairedOrder() {
    return true;
  }

  @Override
  public void multiplyToken(float[] x, float[] out, int oFrom, int oTo, float[] tmp) {
    if (format == Format.Q6_K) {
      KQuantGemm.q6kRows(this, x, out, oFrom, oTo, tmp);
    } else {
      KQuantGemm.scaleMinRows(this, x, out, oFrom, oTo, tmp);
    }
  }

  /** Row {@code row} as floats into {@code dst[off..off + cols)}: the weights the kernels use. */
  @Override
  public void decodeRow(int row, float[] dst, int off) {
    int blocks = cols / SUPER;
    for (int b = 0; b < blocks; b++) {
      int k = row * blocks + b;
      int o = off + b * SUPER;
      if (format == Format.Q6_K) {
        KQuantGemm.q6kBlock(bytes, k * format.blockBytes, scales[k], dst, o);
      } else {
        KQuantGemm.scaleMinBlock(
            bytes,
            k * format.blockBytes,
            format == Format.Q5_K,
            scales[2 * k],
            scales[2 * k + 1],
            dst,
            o);
      }
    }
  }
}
