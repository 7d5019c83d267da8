package io.flinfer.runtime.kernel;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import jdk.incubator.vector.FloatVector;

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
  private static final int LANES = GemmKernels.LANES;

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
   * {@code out[o] = sum_i W[o][i] * x[i]} for rows o in [oFrom, oTo) of one token; {@code tmp}
   * holds eight floats.
   */
  public void multiplyToken(float[] x, float[] out, int oFrom, int oTo, float[] tmp) {
    if (oFrom < 0 || oTo > rows || oFrom > oTo) {
      throw new IndexOutOfBoundsException("rows " + oFrom + ".." + oTo + " of " + rows);
    }
    int colsV = cols - cols % LANES;
    for (int b = oFrom / LANES; b * LANES < oTo; b++) {
      int o = b * LANES;
      if (o >= oFrom && o + LANES <= oTo) {
        block(b, colsV, x, out, o);
      } else {
        // A block the range cuts: computed whole, only the range's rows kept.
        block(b, colsV, x, tmp, 0);
        for (int r = Math.max(o, oFrom); r < Math.min(o + LANES, oTo); r++) {
          out[r] = tmp[r - o];
        }
      }
    }
  }

  /** Block b's eight outputs into {@code out[at..at + 8)}. */
  private void block(int b, int colsV, float[] x, float[] out, int at) {
    float[] w = blocks;
    int base = b * cols * LANES;
    FloatVector c0 = FloatVector.zero(GemmKernels.S);
    FloatVector c1 = c0;
    FloatVector c2 = c0;
    FloatVector c3 = c0;
    FloatVector c4 = c0;
    FloatVector c5 = c0;
    FloatVector c6 = c0;
    FloatVector c7 = c0;
    for (int i = 0; i < colsV; i += LANES) {
      int e = base + i * LANES;
      c0 = column(w, e).fma(broadcast(x, i), c0);
      c1 = column(w, e + LANES).fma(broadcast(x, i + 1), c1);
      c2 = column(w, e + 2 * LANES).fma(broadcast(x, i + 2), c2);
      c3 = column(w, e + 3 * LANES).fma(broadcast(x, i + 3), c3);
      c4 = column(w, e + 4 * LANES).fma(broadcast(x, i + 4), c4);
      c5 = column(w, e + 5 * LANES).fma(broadcast(x, i + 5), c5);
      c6 = column(w, e + 6 * LANES).fma(broadcast(x, i + 6), c6);
      c7 = column(w, e + 7 * LANES).fma(broadcast(x, i + 7), c7);
    }
    FloatVector s = c0.add(c1).add(c2).add(c3).add(c4).add(c5).add(c6).add(c7);
    for (int i = colsV; i < cols; i++) {
      s = s.add(column(w, base + i * LANES).mul(x[i]));
    }
    s.intoArray(out, at);
  }

  private static FloatVector broadcast(float[] x, int i) {
    return FloatVector.broadcast(GemmKernels.S, x[i]);
  }

  private static FloatVector column(float[] w, int at) {
    return FloatVector.fromArray(GemmKernels.S, w, at);
  }

  /** Bytes of heap the copy of a {@code rows} x {@code cols} matrix takes. */
  public static long heapBytes(int rows, int cols) {
    return 4L * ((rows + LANES - 1) / LANES) * LANES * cols;
  }
}
