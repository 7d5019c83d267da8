package io.flinfer.runtime.tensor;

import io.flinfer.runtime.kernel.ActivationRounding;
import io.flinfer.runtime.kernel.Gemm;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * A weight matrix [rows][cols] (out x in, row-major) stored in a read-only, usually memory-mapped
 * buffer in one of the {@link GgmlType} encodings. Owns the view of its bytes, never a heap copy.
 *
 * <p>The product with a batch of activations computes every output with the same arithmetic
 * whatever the batch size or the slice of rows: see {@link Gemm}.
 */
public abstract class WeightMatrix {
  protected final ByteBuffer data;
  protected final int rows;
  protected final int cols;

  protected WeightMatrix(ByteBuffer data, int rows, int cols) {
    this.data = data.duplicate().order(ByteOrder.LITTLE_ENDIAN);
    this.rows = rows;
    this.cols = cols;
  }

  /** Wraps {@code data} as a matrix of {@code type}; the buffer must hold exactly its bytes. */
  public static WeightMatrix of(GgmlType type, ByteBuffer data, int rows, int cols) {
    long need = type.bytes((long) rows * cols);
    if (data.remaining() < need) {
      throw new IllegalArgumentException(
          type
              + " matrix "
              + rows
              + "x"
              + cols
              + " needs "
              + need
              + " bytes, has "
              + data.remaining());
    }
    ByteBuffer slice = data.slice().limit((int) need);
    switch (type) {
      case F32:
        return new F32Matrix(slice, rows, cols);
      case F16:
        return new F16Matrix(slice, rows, cols);
      case BF16:
        return new Bf16Matrix(slice, rows, cols);
      case Q8_0:
        return new Q8Matrix(slice, rows, cols);
      case Q4_0:
        return new Q4Matrix(slice, rows, cols);
      case Q4_K:
      case Q5_K:
        return new ScaleMinKMatrix(type, slice, rows, cols);
      case Q6_K:
        return new Q6KMatrix(slice, rows, cols);
      case Q2_K:
        return new Q2KMatrix(slice, rows, cols);
      case Q3_K:
      case IQ4_XS:
        return new Q6KFormMatrix(type, slice, rows, cols);
      case Q4_1:
      case Q5_1:
      case IQ4_NL:
      case Q5_0:
        return new ByteBlockMatrix(type, slice, rows, cols);
      default:
        throw new IllegalArgumentException("unsupported tensor type " + type);
    }
  }

  public final int rows() {
    return rows;
  }

  public final int cols() {
    return cols;
  }

  public abstract GgmlType type();

  /**
   * Decodes row {@code row} into {@code dst[off..off+cols)} as floats, in vector registers where
   * the format allows; the same bits as {@link #decodeRowReference}.
   */
  public void decodeRow(int row, float[] dst, int off) {
    decodeRowReference(row, dst, off);
  }

  /** The plain scalar decoding, value by value, that the fast one is tested against. */
  public abstract void decodeRowReference(int row, float[] dst, int off);

  /**
   * Rows {@code [from, from + count)} as a matrix of their own over the same bytes (a fused
   * tensor's parts: Phi-3's {@code attn_qkv}, {@code ffn_up}).
   */
  public WeightMatrix rows(int from, int count) {
    return rowsOf(type(), data, rows, cols, from, count);
  }

  /**
   * Rows {@code [from, from + count)} of the {@code rows} x {@code cols} matrix of {@code type} in
   * {@code data}, without making a matrix of the whole: a fused tensor's parts are built straight
   * from the file, and no copy of the whole is made on the heap only to be cut up.
   */
  public static WeightMatrix rowsOf(
      GgmlType type, ByteBuffer data, int rows, int cols, int from, int count) {
    if (from < 0 || count <= 0 || from + count > rows) {
      throw new IllegalArgumentException(
          "rows " + from + ".." + (from + count) + " of a " + rows + "-row matrix");
    }
    long rowBytes = type.bytes(cols);
    ByteBuffer b = data.duplicate();
    b.position(b.position() + (int) (from * rowBytes));
    b.limit(b.position() + (int) (count * rowBytes));
    return of(type, b.slice(), count, cols);
  }

  /** Bytes of weight data read by one full pass over the matrix. */
  public long byteSize() {
    return type().bytes((long) rows * cols);
  }

  /** Floats of scratch {@link #matmul} needs for a matrix of {@code cols} columns. */
  public static int scratchSize(int cols) {
    return Gemm.SCRATCH + 4 * cols;
  }

  /**
   * {@code out[t * outStride + o] = sum_i W[o][i] * x[t * cols + i]} for rows {@code o} in [oFrom,
   * oTo) and tokens t in [0, tokens), the activations {@code x} first rounded as {@link
   * #activationRounding} says (in this thread's buffer). {@code scratch} holds at least {@link
   * #scratchSize} floats: the kernels' accumulators, then up to four decoded rows.
   */
  public final void matmul(
      float[] x, int tokens, float[] out, int outStride, int oFrom, int oTo, float[] scratch) {
    float[] rounded = activationRounding().apply(x, tokens * cols);
    matmulRounded(rounded, tokens, out, outStride, oFrom, oTo, scratch);
  }

  /**
   * How this matrix's products round their activations first ({@link ActivationRounding#NONE}
   * unless a subclass says otherwise): a caller that shares one input between several products and
   * threads rounds it once and calls {@link #matmulRounded}.
   */
  public ActivationRounding activationRounding() {
    return ActivationRounding.NONE;
  }

  /**
   * As {@link #matmul}, with {@code x} already rounded by {@link #activationRounding}. This base
   * form decodes rows into the scratch and multiplies them in float tiles.
   */
  public void matmulRounded(
      float[] x, int tokens, float[] out, int outStride, int oFrom, int oTo, float[] scratch) {
    int rowsAt = Gemm.SCRATCH;
    int o = oFrom;
    // A batch takes four rows per tile where the CPU has the registers, else two. Each output gets
    // the same bits either way.
    for (; o + 4 <= oTo && tokens > 1 && Gemm.FOUR_ROW_TILES; o += 4) {
      for (int r = 0; r < 4; r++) {
        decodeRow(o + r, scratch, rowsAt + r * cols);
      }
      Gemm.rows4(scratch, rowsAt, cols, x, tokens, out, outStride, o, scratch);
    }
    for (; o + 2 <= oTo && tokens > 1; o += 2) {
      decodeRow(o, scratch, rowsAt);
      decodeRow(o + 1, scratch, rowsAt + cols);
      Gemm.rows2(scratch, rowsAt, cols, x, tokens, out, outStride, o, scratch);
    }
    for (; o < oTo; o++) {
      decodeRow(o, scratch, rowsAt);
      Gemm.rows1(scratch, rowsAt, cols, x, tokens, out, outStride, o, scratch);
    }
  }
}
