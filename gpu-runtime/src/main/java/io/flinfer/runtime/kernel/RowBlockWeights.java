package io.flinfer.runtime.kernel;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * A float32 matrix copied onto the heap in blocks of eight rows stored column by column: one vector
 * load gives column i of eight rows, so a token is multiplied eight rows at a time with no
 * horizontal sums. For small matrices, whose products are bound by the work per row rather than by
 * memory: on a 64-column row the one-accumulator kernel spends more on summing its lanes and on the
 * buffer's index checks than on multiplying.
 *
 * <p>The bits are those of {@link Gemm}'s order: accumulator c of a block holds lane c of each of
 * its rows' accumulators (columns c, c + 8, ... multiplied and added in column order), the eight
 * are added left to right as a row's lanes are, then the scalar tail is added product by product.
 */
public final class RowBlockWeights {
  private static final VectorSpecies<Float> S = GemmKernels.S;
  private static final int LANES = GemmKernels.LANES;

  /** Three tokens' 24 accumulators need AVX-512's 32 vector registers (AVX2's 16 would spill). */
  private static final boolean THREE_TOKEN_TILES = QuadRowGemm.AVAILABLE;

  /** Value (row r, column i) at {@code blocks[((r / 8) * cols + i) * 8 + r % 8]}; rows padded. */
  private final float[] blocks;

  private final int rows;
  private final int cols;

  private RowBlockWeights(float[] blocks, int rows, int cols) {
    this.blocks = blocks;
    this.rows = rows;
    this.cols = cols;
  }

  /** The {@code rows} x {@code cols} float32 matrix in little-endian {@code data}. */
  public static RowBlockWeights of(ByteBuffer data, int rows, int cols) {
    int blockCount = (rows + LANES - 1) / LANES;
    float[] blocks = new float[Math.multiplyExact(blockCount * LANES, cols)];
    FloatBuffer f = data.duplicate().order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer();
    float[] row = new float[cols];
    for (int r = 0; r < rows; r++) {
      f.get(r * cols, row, 0, cols);
      int base = (r / LANES) * cols * LANES + r % LANES;
      for (int i = 0; i < cols; i++) {
        blocks[base + i * LANES] = row[i];
      }
    }
    return new RowBlockWeights(blocks, rows, cols);
  }

  /**
   * {@code out[t * outStride + o] = sum_i W[o][i] * x[t * cols + i]} for rows o in [oFrom, oTo) and
   * tokens t in [0, tokens): each block's weights read once for three tokens where the CPU has the
   * registers (AVX-512), the same bits for every token as alone. {@code tmp} holds 24 floats.
   */
  public void multiplyTokens(
      float[] x, int tokens, float[] out, int outStride, int oFrom, int oTo, float[] tmp) {
    multiplyTokens(x, tokens, out, outStride, oFrom, oTo, tmp, THREE_TOKEN_TILES);
  }

  /** Whether batches pay here: this CPU takes three-token tiles. */
  public static boolean takesBatches() {
    return THREE_TOKEN_TILES;
  }

  /** As the public form, with or without three-token tiles (tests run both on any CPU). */
  void multiplyTokens(
      float[] x,
      int tokens,
      float[] out,
      int outStride,
      int oFrom,
      int oTo,
      float[] tmp,
      boolean threeTokenTiles) {
    if (oFrom < 0 || oTo > rows || oFrom > oTo) {
      throw new IndexOutOfBoundsException("rows " + oFrom + ".." + oTo + " of " + rows);
    }
    int colsV = cols - cols % LANES;
    for (int b = oFrom / LANES; b * LANES < oTo; b++) {
      int o = b * LANES;
      // A block the range cuts is computed whole into tmp, and only the range's rows are kept.
      boolean whole = o >= oFrom && o + LANES <= oTo;
      int t = 0;
      for (; threeTokenTiles && t + 3 <= tokens; t += 3) {
        if (whole) {
          block3(
              b,
              colsV,
              x,
              t,
              out,
              t * outStride + o,
              (t + 1) * outStride + o,
              (t + 2) * outStride + o);
        } else {
          block3(b, colsV, x, t, tmp, 0, LANES, 2 * LANES);
          for (int k = 0; k < 3; k++) {
            keep(tmp, k * LANES, out, (t + k) * outStride, o, oFrom, oTo);
          }
        }
      }
      for (; t < tokens; t++) {
        if (whole) {
          block(b, colsV, x, t * cols, out, t * outStride + o);
        } else {
          block(b, colsV, x, t * cols, tmp, 0);
          keep(tmp, 0, out, t * outStride, o, oFrom, oTo);
        }
      }
    }
  }

  /**
   * Rows of block {@code o / 8} within [oFrom, oTo), from {@code tmp[at..]} to {@code out[row +
   * r]}.
   */
  private static void keep(float[] tmp, int at, float[] out, int row, int o, int oFrom, int oTo) {
    for (int r = Math.max(o, oFrom); r < Math.min(o + LANES, oTo); r++) {
      out[row + r] = tmp[at + r - o];
    }
  }

  /** Block b's eight outputs for the token at {@code x[xOff..]} into {@code out[at..at + 8)}. */
  private void block(int b, int colsV, float[] x, int xOff, float[] out, int at) {
    float[] w = blocks;
    int base = b * cols * LANES;
    FloatVector c0 = FloatVector.zero(S);
    FloatVector c1 = c0;
    FloatVector c2 = c0;
    FloatVector c3 = c0;
    FloatVector c4 = c0;
    FloatVector c5 = c0;
    FloatVector c6 = c0;
    FloatVector c7 = c0;
    for (int i = 0; i < colsV; i += LANES) {
      int e = base + i * LANES;
      c0 = FloatVector.fromArray(S, w, e).fma(FloatVector.broadcast(S, x[xOff + i]), c0);
      c1 =
          FloatVector.fromArray(S, w, e + LANES).fma(FloatVector.broadcast(S, x[xOff + i + 1]), c1);
      c2 =
          FloatVector.fromArray(S, w, e + 2 * LANES)
              .fma(FloatVector.broadcast(S, x[xOff + i + 2]), c2);
      c3 =
          FloatVector.fromArray(S, w, e + 3 * LANES)
              .fma(FloatVector.broadcast(S, x[xOff + i + 3]), c3);
      c4 =
          FloatVector.fromArray(S, w, e + 4 * LANES)
              .fma(FloatVector.broadcast(S, x[xOff + i + 4]), c4);
      c5 =
          FloatVector.fromArray(S, w, e + 5 * LANES)
              .fma(FloatVector.broadcast(S, x[xOff + i + 5]), c5);
      c6 =
          FloatVector.fromArray(S, w, e + 6 * LANES)
              .fma(FloatVector.broadcast(S, x[xOff + i + 6]), c6);
      c7 =
          FloatVector.fromArray(S, w, e + 7 * LANES)
              .fma(FloatVector.broadcast(S, x[xOff + i + 7]), c7);
    }
    FloatVector s = c0.add(c1).add(c2).add(c3).add(c4).add(c5).add(c6).add(c7);
    for (int i = colsV; i < cols; i++) {
      s = s.add(FloatVector.fromArray(S, w, base + i * LANES).mul(x[xOff + i]));
    }
    s.intoArray(out, at);
  }

  /**
   * Block b's eight outputs for tokens t, t + 1 and t + 2 into {@code out[at0..)}, {@code
   * out[at1..)} and {@code out[at2..)}: each column of weights loaded once for the three, each
   * token's sums in {@link #block}'s order.
   */
  private void block3(int b, int colsV, float[] x, int t, float[] out, int at0, int at1, int at2) {
    float[] w = blocks;
    int base = b * cols * LANES;
    int x0 = t * cols;
    int x1 = x0 + cols;
    int x2 = x1 + cols;
    FloatVector a0 = FloatVector.zero(S);
    FloatVector a1 = a0;
    FloatVector a2 = a0;
    FloatVector a3 = a0;
    FloatVector a4 = a0;
    FloatVector a5 = a0;
    FloatVector a6 = a0;
    FloatVector a7 = a0;
    FloatVector b0 = FloatVector.zero(S);
    FloatVector b1 = b0;
    FloatVector b2 = b0;
    FloatVector b3 = b0;
    FloatVector b4 = b0;
    FloatVector b5 = b0;
    FloatVector b6 = b0;
    FloatVector b7 = b0;
    FloatVector c0 = FloatVector.zero(S);
    FloatVector c1 = c0;
    FloatVector c2 = c0;
    FloatVector c3 = c0;
    FloatVector c4 = c0;
    FloatVector c5 = c0;
    FloatVector c6 = c0;
    FloatVector c7 = c0;
    for (int i = 0; i < colsV; i += LANES) {
      int e = base + i * LANES;
      FloatVector v;
      v = FloatVector.fromArray(S, w, e);
      a0 = v.fma(FloatVector.broadcast(S, x[x0 + i]), a0);
      b0 = v.fma(FloatVector.broadcast(S, x[x1 + i]), b0);
      c0 = v.fma(FloatVector.broadcast(S, x[x2 + i]), c0);
      v = FloatVector.fromArray(S, w, e + LANES);
      a1 = v.fma(FloatVector.broadcast(S, x[x0 + i + 1]), a1);
      b1 = v.fma(FloatVector.broadcast(S, x[x1 + i + 1]), b1);
      c1 = v.fma(FloatVector.broadcast(S, x[x2 + i + 1]), c1);
      v = FloatVector.fromArray(S, w, e + 2 * LANES);
      a2 = v.fma(FloatVector.broadcast(S, x[x0 + i + 2]), a2);
      b2 = v.fma(FloatVector.broadcast(S, x[x1 + i + 2]), b2);
      c2 = v.fma(FloatVector.broadcast(S, x[x2 + i + 2]), c2);
      v = FloatVector.fromArray(S, w, e + 3 * LANES);
      a3 = v.fma(FloatVector.broadcast(S, x[x0 + i + 3]), a3);
      b3 = v.fma(FloatVector.broadcast(S, x[x1 + i + 3]), b3);
      c3 = v.fma(FloatVector.broadcast(S, x[x2 + i + 3]), c3);
      v = FloatVector.fromArray(S, w, e + 4 * LANES);
      a4 = v.fma(FloatVector.broadcast(S, x[x0 + i + 4]), a4);
      b4 = v.fma(FloatVector.broadcast(S, x[x1 + i + 4]), b4);
      c4 = v.fma(FloatVector.broadcast(S, x[x2 + i + 4]), c4);
      v = FloatVector.fromArray(S, w, e + 5 * LANES);
      a5 = v.fma(FloatVector.broadcast(S, x[x0 + i + 5]), a5);
      b5 = v.fma(FloatVector.broadcast(S, x[x1 + i + 5]), b5);
      c5 = v.fma(FloatVector.broadcast(S, x[x2 + i + 5]), c5);
      v = FloatVector.fromArray(S, w, e + 6 * LANES);
      a6 = v.fma(FloatVector.broadcast(S, x[x0 + i + 6]), a6);
      b6 = v.fma(FloatVector.broadcast(S, x[x1 + i + 6]), b6);
      c6 = v.fma(FloatVector.broadcast(S, x[x2 + i + 6]), c6);
      v = FloatVector.fromArray(S, w, e + 7 * LANES);
      a7 = v.fma(FloatVector.broadcast(S, x[x0 + i + 7]), a7);
      b7 = v.fma(FloatVector.broadcast(S, x[x1 + i + 7]), b7);
      c7 = v.fma(FloatVector.broadcast(S, x[x2 + i + 7]), c7);
    }
    FloatVector sa = a0.add(a1).add(a2).add(a3).add(a4).add(a5).add(a6).add(a7);
    FloatVector sb = b0.add(b1).add(b2).add(b3).add(b4).add(b5).add(b6).add(b7);
    FloatVector sc = c0.add(c1).add(c2).add(c3).add(c4).add(c5).add(c6).add(c7);
    for (int i = colsV; i < cols; i++) {
      FloatVector v = FloatVector.fromArray(S, w, base + i * LANES);
      sa = sa.add(v.mul(x[x0 + i]));
      sb = sb.add(v.mul(x[x1 + i]));
      sc = sc.add(v.mul(x[x2 + i]));
    }
    sa.intoArray(out, at0);
    sb.intoArray(out, at1);
    sc.intoArray(out, at2);
  }

  /** Bytes of heap the copy of a {@code rows} x {@code cols} matrix takes. */
  public static long heapBytes(int rows, int cols) {
    return 4L * ((rows + LANES - 1) / LANES) * LANES * cols;
  }
}
