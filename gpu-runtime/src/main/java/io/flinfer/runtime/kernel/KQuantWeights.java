package io.flinfer.runtime.kernel;

import io.flinfer.memcache.HalfFloats;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.VectorOperators;

/**
 * A K-quant matrix (Q4_K, Q5_K, Q6_K) on the heap: the file's super-blocks with each one's fp16
 * scales read once into floats (exact). For Q4_K/Q5_K, the 12 bytes of packed 6-bit sub-block
 * scales and mins are unpacked in place into 8 scale and 8 min bytes (the 16 bytes the fp16 scales
 * and the packing took, so a block keeps its size), and the values stay 4 or 5 bits. A Q6_K block
 * becomes its 16 scale bytes and then its 256 values {@code q - 32} as signed bytes, in the row's
 * order (272 bytes for the file's 210): joining each value's two bit fields cost more vector
 * operations than the product itself, so the heap holds them joined. Rows become floats only in
 * vector registers ({@link KQuantGemm}), in a row of scratch for a batch, or, with 8-bit
 * activations, as scaled integers for a batch's tile ({@link KQuantDots}, {@link KQuantTile}).
 */
public final class KQuantWeights implements CompactWeights {
  /** The formats, by how a super-block's values are scaled. */
  public enum Format {
    /** Q4_K: d * scale * q - dmin * min, 4-bit q, 144 bytes a super-block. */
    Q4_K(144, 144, 2),
    /** Q5_K: as Q4_K with a fifth bit per value, 176 bytes a super-block. */
    Q5_K(176, 176, 2),
    /**
     * Q6_K: d * scale * (q - 32), 6-bit q, signed 8-bit scales of 16 values, 210 bytes in the file
     * and 272 on the heap.
     */
    Q6_K(210, 272, 1),
    /**
     * Q2_K: d * scale * q - dmin * min, 2-bit q, 4-bit scales and mins of 16 values, 84 bytes in
     * the file and 288 on the heap (16 scales, 16 mins, then a byte per value).
     */
    Q2_K(84, 288, 2);

    final int blockBytes;
    final int heapBytes;
    final int scalesPerBlock;

    Format(int blockBytes, int heapBytes, int scalesPerBlock) {
      this.blockBytes = blockBytes;
      this.heapBytes = heapBytes;
      this.scalesPerBlock = scalesPerBlock;
    }

    /** Bytes of a super-block of 256 values in the file. */
    public int blockBytes() {
      return blockBytes;
    }

    /** Bytes a super-block of 256 values takes on the heap, its float scales included. */
    public int heapBytesPerBlock() {
      return heapBytes + 4 * scalesPerBlock;
    }
  }

  static final int SUPER = 256;

  private final Format format;

  /**
   * The file blocks the heap form is read from: the format's own, or Q3_K and IQ4_XS super-blocks,
   * which take the Q6_K heap form (a signed byte per value and per 16-value scale, and d).
   */
  public enum Source {
    /** The heap format's own file blocks. */
    OWN(0),
    /** Q3_K: 32 bytes of high bits, 64 of bit pairs, 12 of 6-bit scales, fp16 d. */
    Q3_K(110),
    /** IQ4_XS: fp16 d, 2 + 4 bytes of 6-bit scales of 32 values, 128 bytes of 4-bit indices. */
    IQ4_XS(136);

    private final int blockBytes;

    Source(int blockBytes) {
      this.blockBytes = blockBytes;
    }

    /** Bytes of a super-block in the file (for {@link #OWN}, the format's). */
    public int blockBytes(Format format) {
      return this == OWN ? format.blockBytes : blockBytes;
    }
  }

  /**
   * The values IQ4_NL and IQ4_XS indices stand for (llama.cpp's {@code kvalues_iq4nl}): a value is
   * its block's scale times the entry.
   */
  public static final byte[] IQ4_VALUES = {
    -127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113
  };

  private final Source source;

  private final int cols;
  // Final but for scratch matrices (fill), which grow them.
  private byte[] bytes;
  private float[] scales;

  private KQuantWeights(Format format, byte[] bytes, float[] scales, int cols, Source source) {
    this.format = format;
    this.source = source;
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

  /** Q2_K super-blocks from {@code data}. */
  public static KQuantWeights q2k(ByteBuffer data, int rows, int cols) {
    return copy(Format.Q2_K, data, rows, cols);
  }

  /** Q6_K super-blocks from {@code data}. */
  public static KQuantWeights q6k(ByteBuffer data, int rows, int cols) {
    return copy(Format.Q6_K, data, rows, cols, Source.OWN);
  }

  /** Q3_K super-blocks from {@code data}, in the Q6_K heap form. */
  public static KQuantWeights q3k(ByteBuffer data, int rows, int cols) {
    return copy(Format.Q6_K, data, rows, cols, Source.Q3_K);
  }

  /** IQ4_XS super-blocks from {@code data}, in the Q6_K heap form. */
  public static KQuantWeights iq4xs(ByteBuffer data, int rows, int cols) {
    return copy(Format.Q6_K, data, rows, cols, Source.IQ4_XS);
  }

  private static KQuantWeights copy(Format format, ByteBuffer data, int rows, int cols) {
    return copy(format, data, rows, cols, Source.OWN);
  }

  private static KQuantWeights copy(
      Format format, ByteBuffer data, int rows, int cols, Source source) {
    if (cols % SUPER != 0) {
      throw new IllegalArgumentException("columns must fill whole super-blocks: " + cols);
    }
    int blocks = Math.multiplyExact(rows, cols / SUPER);
    KQuantWeights w =
        new KQuantWeights(
            format,
            new byte[Math.multiplyExact(blocks, format.heapBytes)],
            new float[blocks * format.scalesPerBlock],
            cols,
            source);
    w.fill(data, 0, rows);
    return w;
  }

  /**
   * An empty matrix of {@code format} whose rows {@link #fill} copies from a mapped file, a tile at
   * a time: the heap layout for a matrix the heap has no room for.
   */
  public static KQuantWeights scratch(Format format, int cols) {
    return scratch(format, Source.OWN, cols);
  }

  /** As {@link #scratch} for a file of {@code source} blocks. */
  public static KQuantWeights scratch(Format format, Source source, int cols) {
    return new KQuantWeights(format, new byte[0], new float[0], cols, source);
  }

  /**
   * Copies rows {@code [from, from + count)} of the file's matrix in {@code data} into this one's
   * first rows, growing its arrays as needed; returns this.
   */
  public KQuantWeights fill(ByteBuffer data, int from, int count) {
    ByteBuffer b = data.duplicate().order(ByteOrder.LITTLE_ENDIAN);
    int perRow = cols / SUPER;
    int blocks = count * perRow;
    if (bytes.length < blocks * format.heapBytes) {
      bytes = new byte[blocks * format.heapBytes];
      scales = new float[blocks * format.scalesPerBlock];
    }
    int fileBytes = source.blockBytes(format);
    int start = b.position() + from * perRow * fileBytes;
    if (source != Source.OWN) {
      for (int k = 0; k < blocks; k++) {
        int p = start + k * fileBytes;
        if (source == Source.Q3_K) {
          scales[k] = HalfFloats.fromHalf(b.getShort(p + 108));
          joinQ3k(b, p, bytes, k * format.heapBytes);
        } else {
          scales[k] = HalfFloats.fromHalf(b.getShort(p));
          lookUpIq4xs(b, p, bytes, k * format.heapBytes);
        }
      }
      return this;
    }
    if (format == Format.Q6_K) {
      for (int k = 0; k < blocks; k++) {
        int p = start + k * format.blockBytes;
        scales[k] = HalfFloats.fromHalf(b.getShort(p + 208));
        joinQ6k(b, p, bytes, k * format.heapBytes);
      }
      return this;
    }
    if (format == Format.Q2_K) {
      for (int k = 0; k < blocks; k++) {
        int p = start + k * format.blockBytes;
        scales[2 * k] = HalfFloats.fromHalf(b.getShort(p + 80));
        scales[2 * k + 1] = HalfFloats.fromHalf(b.getShort(p + 82));
        splitQ2k(b, p, bytes, k * format.heapBytes);
      }
      return this;
    }
    b.get(start, bytes, 0, blocks * format.blockBytes);
    for (int k = 0; k < blocks; k++) {
      int p = k * format.blockBytes;
      scales[2 * k] = HalfFloats.fromHalf(b.getShort(start + p));
      scales[2 * k + 1] = HalfFloats.fromHalf(b.getShort(start + p + 2));
      long low8 = b.getLong(start + p + 4);
      int high4 = b.getInt(start + p + 12);
      for (int j = 0; j < 8; j++) {
        int sm = KScales.scaleMin(low8, high4, j);
        bytes[p + j] = (byte) (sm & 0xff);
        bytes[p + 8 + j] = (byte) (sm >>> 8);
      }
    }
    return this;
  }

  /**
   * The file's Q6_K super-block at {@code b[p..]} in the heap form at {@code dst[o..]}: its 16
   * scales, then each value's low nibble and bit pair joined, less 32. A half of 128 values has 64
   * bytes of nibbles (quarter k: low nibbles of bytes 32 (k & 1).., high ones for k >= 2) and 32
   * bytes of bit pairs (pair k for quarter k).
   */
  private static void joinQ6k(ByteBuffer b, int p, byte[] dst, int o) {
    b.get(p + 192, dst, o, 16);
    for (int half = 0; half < 2; half++) {
      ByteVector a = HalfVectors.bytes32(b, p + 64 * half);
      ByteVector c = HalfVectors.bytes32(b, p + 64 * half + 32);
      ByteVector h = HalfVectors.bytes32(b, p + 128 + 32 * half);
      int y = o + 16 + 128 * half;
      joinedQ6k(a.and((byte) 0x0f), h, 0).intoArray(dst, y);
      joinedQ6k(c.and((byte) 0x0f), h, 2).intoArray(dst, y + 32);
      joinedQ6k(a.lanewise(VectorOperators.LSHR, 4), h, 4).intoArray(dst, y + 64);
      joinedQ6k(c.lanewise(VectorOperators.LSHR, 4), h, 6).intoArray(dst, y + 96);
    }
  }

  /**
   * The file's Q3_K super-block at {@code b[p..]} in the Q6_K heap form at {@code dst[o..]}: its 16
   * scales less 32, then each value's bit pair with its high bit, less 4. Value {@code i = 128 h +
   * 32 s + l} has its pair at bits {@code 2s} of byte {@code 32 + 32 h + l} and its high bit at bit
   * {@code i / 32} of byte {@code l}.
   */
  private static void joinQ3k(ByteBuffer b, int p, byte[] dst, int o) {
    for (int j = 0; j < 16; j++) {
      dst[o + j] = (byte) (KScales.q3kScale(b, p + 96, j) - 32);
    }
    ByteVector highBits = HalfVectors.bytes32(b, p);
    for (int h = 0; h < 2; h++) {
      ByteVector pairs = HalfVectors.bytes32(b, p + 32 + 32 * h);
      for (int s = 0; s < 4; s++) {
        ByteVector low = pairs.lanewise(VectorOperators.LSHR, 2 * s).and((byte) 3);
        ByteVector high =
            highBits
                .lanewise(VectorOperators.LSHR, 4 * h + s)
                .and((byte) 1)
                .lanewise(VectorOperators.LSHL, 2);
        low.or(high).sub((byte) 4).intoArray(dst, o + 16 + 128 * h + 32 * s);
      }
    }
  }

  /**
   * The file's Q2_K super-block at {@code b[p..]} in its heap form at {@code dst[o..]}: the 16
   * scales (low nibbles of bytes 0..15), the 16 mins (their high nibbles), then each value's bit
   * pair as a byte. Value {@code i = 128 h + 32 s + l} has its pair at bits {@code 2s} of byte
   * {@code 16 + 32 h + l}.
   */
  private static void splitQ2k(ByteBuffer b, int p, byte[] dst, int o) {
    for (int j = 0; j < 16; j++) {
      int sm = b.get(p + j);
      dst[o + j] = (byte) (sm & 0x0f);
      dst[o + 16 + j] = (byte) ((sm >>> 4) & 0x0f);
    }
    for (int h = 0; h < 2; h++) {
      ByteVector pairs = HalfVectors.bytes32(b, p + 16 + 32 * h);
      for (int s = 0; s < 4; s++) {
        pairs
            .lanewise(VectorOperators.LSHR, 2 * s)
            .and((byte) 3)
            .intoArray(dst, o + 32 + 128 * h + 32 * s);
      }
    }
  }

  /**
   * The file's IQ4_XS super-block at {@code b[p..]} in the Q6_K heap form at {@code dst[o..]}: each
   * 32-value sub-block's 6-bit scale less 32, twice (the form has one per 16 values), then each
   * value's entry of {@link #IQ4_VALUES}. Sub-block j's scale has its low nibble in byte {@code 4 +
   * j / 2} (high nibble for odd j) and its top bits at bits {@code 2j} of the 16-bit word at 2; its
   * 32 values are the low nibbles of bytes {@code 8 + 16j..} and then their high nibbles.
   */
  private static void lookUpIq4xs(ByteBuffer b, int p, byte[] dst, int o) {
    int high = b.getShort(p + 2) & 0xffff;
    for (int j = 0; j < 8; j++) {
      int low = (b.get(p + 4 + j / 2) >>> (4 * (j & 1))) & 0x0f;
      byte scale = (byte) ((low | ((high >>> (2 * j)) & 3) << 4) - 32);
      dst[o + 2 * j] = scale;
      dst[o + 2 * j + 1] = scale;
      for (int l = 0; l < 16; l++) {
        int q = b.get(p + 8 + 16 * j + l);
        dst[o + 16 + 32 * j + l] = IQ4_VALUES[q & 0x0f];
        dst[o + 16 + 32 * j + 16 + l] = IQ4_VALUES[(q >>> 4) & 0x0f];
      }
    }
  }

  /**
   * Q6_K values: nibbles {@code low} with the bit pairs at {@code shift} of {@code h} above them,
   * less 32 (the heap form's bytes, and the mapped decoder's).
   */
  public static ByteVector joinedQ6k(ByteVector low, ByteVector h, int shift) {
    ByteVector high =
        h.lanewise(VectorOperators.LSHR, shift).and((byte) 3).lanewise(VectorOperators.LSHL, 4);
    return low.or(high).sub((byte) 32);
  }

  /** Whether super-blocks have mins (Q4_K, Q5_K; Q2_K, which has no 8-bit activation path). */
  boolean hasMins() {
    return format != Format.Q6_K;
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

  public int cols() {
    return cols;
  }

  /** One token with float activations ({@link KQuantGemm}): the bits of the decoded rows. */
  @Override
  public void multiplyToken(float[] x, float[] out, int oFrom, int oTo, float[] tmp) {
    if (format == Format.Q6_K) {
      KQuantGemm.q6kRows(this, x, out, oFrom, oTo, tmp);
    } else if (format == Format.Q2_K) {
      KQuantGemm.q2kRows(this, x, out, oFrom, oTo, tmp);
    } else {
      KQuantGemm.scaleMinRows(this, x, out, oFrom, oTo, tmp);
    }
  }

  @Override
  public boolean multiplyTokens(
      float[] x, int tokens, float[] out, int outStride, int oFrom, int oTo, float[] tmp) {
    if (!KQuantQuadGemm.takes(this, tokens)) {
      return false;
    }
    KQuantQuadGemm.rows(this, x, tokens, out, outStride, oFrom, oTo, tmp);
    return true;
  }

  /** Row {@code row} times token {@code t} of {@code a} ({@link KQuantDots}). */
  public float dot(int row, Q8KActivations a, int t) {
    int blocks = cols / SUPER;
    if (format == Format.Q6_K) {
      return KQuantDots.q6k(bytes, scales, row * blocks, blocks, a, t);
    }
    return KQuantDots.scaleMin(bytes, scales, row * blocks, blocks, format == Format.Q5_K, a, t);
  }

  /**
   * Row {@code row}'s weights as the integers {@code scale * q} in floats, each super-block's
   * followed by its 8 mins ({@link KQuantDots#SPAN} floats a super-block), into {@code dst[off..]}:
   * the form a batch's tile multiplies ({@link KQuantTile}).
   */
  public void decodeScaled(int row, float[] dst, int off) {
    int blocks = cols / SUPER;
    if (format == Format.Q6_K) {
      KQuantDots.q6kFloats(bytes, row * blocks, blocks, dst, off);
    } else {
      KQuantDots.scaleMinFloats(bytes, row * blocks, blocks, format == Format.Q5_K, dst, off);
    }
  }

  /**
   * Outputs of rows {@code row..row + rows}, decoded by {@link #decodeScaled} at {@code w[wOff..]}
   * one after the other, for tokens {@code t..t + tokens} of {@code a}, into {@code out[token *
   * stride + o + i]}: the bits of {@link #dot}. Tiles of 1 or 2 rows by 1 to 3 tokens, or, where
   * {@link #quadTiles} says the CPU has the registers, of 4 rows by 1 to 4 tokens. {@code
   * tileSums}: this thread's {@link #tileScratch}.
   */
  public void multiplyDecoded(
      int[][] tileSums,
      int row,
      int rows,
      float[] w,
      int wOff,
      Q8KActivations a,
      int t,
      int tokens,
      float[] out,
      int stride,
      int o) {
    if (rows == 4) {
      KQuantQuadTile.tile(tileSums, this, row, w, wOff, a, t, tokens, out, stride, o);
    } else {
      KQuantTile.tile(tileSums, this, row, rows, w, wOff, a, t, tokens, out, stride, o);
    }
  }

  /** Whether {@link #multiplyDecoded} takes tiles of four rows on this CPU. */
  public static boolean quadTiles() {
    return QuadRowGemm.AVAILABLE;
  }

  /** This thread's scratch for {@link #multiplyDecoded}. */
  public int[][] tileScratch() {
    return KQuantTile.sums(cols);
  }

  /** {@link #dot} value by value: the reference the vector kernels are tested against. */
  float dotReference(int row, Q8KActivations a, int t) {
    int blocks = cols / SUPER;
    if (format == Format.Q6_K) {
      return KQuantDots.q6kReference(bytes, scales, row * blocks, blocks, a, t);
    }
    return KQuantDots.scaleMinReference(
        bytes, scales, row * blocks, blocks, format == Format.Q5_K, a, t);
  }

  /** Row {@code row} as floats into {@code dst[off..off + cols)}: the weights the kernels use. */
  @Override
  public void decodeRow(int row, float[] dst, int off) {
    int blocks = cols / SUPER;
    for (int b = 0; b < blocks; b++) {
      int k = row * blocks + b;
      int o = off + b * SUPER;
      if (format == Format.Q6_K) {
        KQuantGemm.q6kBlock(bytes, k * format.heapBytes, scales[k], dst, o);
      } else if (format == Format.Q2_K) {
        KQuantGemm.q2kBlock(bytes, k * format.heapBytes, scales[2 * k], scales[2 * k + 1], dst, o);
      } else {
        KQuantGemm.scaleMinBlock(
            bytes,
            k * format.heapBytes,
            format == Format.Q5_K,
            scales[2 * k],
            scales[2 * k + 1],
            dst,
            o);
      }
    }
  }
}
