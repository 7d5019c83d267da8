package io.flinfer.runtime.tensor;

import io.flinfer.runtime.kernel.CompactWeights;
import io.flinfer.runtime.kernel.Gemm;
import io.flinfer.runtime.kernel.PairedGemm;

/**
 * A compact matrix left in the mapped file, for when the heap has no room for a copy: rows decode
 * from the mapping, and one token is multiplied over its decoded rows in the order the heap copy's
 * kernel uses, so a token gets the same bits whichever way its weights were placed.
 */
final class MappedRows implements CompactWeights {
  /** Decodes row {@code row} of the mapped bytes into {@code dst[off..off + cols)}. */
  @FunctionalInterface
  interface RowDecoder {
    void decode(int row, float[] dst, int off);
  }

  private final RowDecoder decoder;
  private final int cols;
  private final boolean paired;

  MappedRows(RowDecoder decoder, int cols, boolean paired) {
    this.decoder = decoder;
    this.cols = cols;
    this.paired = paired;
  }

  @Override
  public void decodeRow(int row, float[] dst, int off) {
    decoder.decode(row, dst, off);
  }

  /** {@code tmp} is the product's whole scratch: the row decodes behind the accumulators. */
  @Override
  public void multiplyToken(float[] x, float[] out, int oFrom, int oTo, float[] tmp) {
    int rowAt = Gemm.SCRATCH;
    for (int o = oFrom; o < oTo; o++) {
      decoder.decode(o, tmp, rowAt);
      if (paired) {
        PairedGemm.rows1(tmp, rowAt, cols, x, 1, out, 0, o, tmp);
      } else {
        Gemm.rows1(tmp, rowAt, cols, x, 1, out, 0, o, tmp);
      }
    }
  }

  @Override
  public boolean pairedOrder() {
    return paired;
  }
}
