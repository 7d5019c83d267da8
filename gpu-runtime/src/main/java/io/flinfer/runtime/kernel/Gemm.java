package io.flinfer.runtime.kernel;

import java.nio.ByteBuffer;
import jdk.incubator.vector.FloatVector;

/**
 * Batched matrix products {@code out[t][o] = sum_i W[o][i] * x[t][i]}: the weights are read once
 * for all tokens of a batch, which is why continuous batching pays.
 *
 * <p>Determinism: each output is reduced in one fixed order (one 8-lane accumulator over the row,
 * lanes summed in order, then the scalar tail), whatever the number of tokens, the tile it falls in
 * or the thread that computes it. A token's result therefore never depends on what else is in the
 * batch.
 */
public final class Gemm {
  private Gemm() {}

  /**
   * Bits of the vectors every CPU kernel uses: 256 on every machine, so a request's outputs are the
   * same bits on AVX2 and AVX-512 CPUs (512-bit conversions measured slower under JDK 17).
   */
  public static final int VECTOR_BITS = GemmKernels.S.vectorBitSize();

  /** Bits of the widest vectors this CPU offers the JVM. */
  public static int availableVectorBits() {
    return FloatVector.SPECIES_PREFERRED.vectorBitSize();
  }

  /** Scratch floats a call needs besides the decoded rows. */
  public static final int SCRATCH = GemmKernels.SCRATCH;

  /**
   * Float32 weights straight from a little-endian buffer: rows [oFrom, oTo). {@code tmp} holds at
   * least {@link #SCRATCH} floats.
   */
  public static void bufferRows(
      ByteBuffer w,
      int cols,
      float[] x,
      int tokens,
      float[] out,
      int outStride,
      int oFrom,
      int oTo,
      float[] tmp) {
    GemmKernels.bufferRows(w, cols, x, tokens, out, outStride, oFrom, oTo, tmp);
  }

  /**
   * Whether {@link #bufferTiles} takes a batch of {@code tokens}: a few tokens on a CPU with the
   * registers for four-row tiles.
   */
  public static boolean takesBufferTiles(int tokens) {
    return BufferQuadGemm.takes(tokens);
  }

  /**
   * As {@link #bufferRows} for a batch {@link #takesBufferTiles} takes: four rows by up to four
   * tokens a tile, straight from the buffer; the same bits.
   */
  public static void bufferTiles(
      ByteBuffer w,
      int cols,
      float[] x,
      int tokens,
      float[] out,
      int outStride,
      int oFrom,
      int oTo,
      float[] tmp) {
    BufferQuadGemm.rows(w, cols, x, tokens, out, outStride, oFrom, oTo, tmp);
  }

  /** Rows o and o + 1, decoded to {@code w[wOff..wOff + 2 * cols)}. */
  public static void rows2(
      float[] w,
      int wOff,
      int cols,
      float[] x,
      int tokens,
      float[] out,
      int outStride,
      int o,
      float[] tmp) {
    GemmKernels.arrayRows2(w, wOff, cols, x, tokens, out, outStride, o, tmp);
  }

  /**
   * Whether {@link #rows4} pays on this CPU (it has the registers for four-row tiles); the bits are
   * the same either way.
   */
  public static final boolean FOUR_ROW_TILES = QuadRowGemm.AVAILABLE;

  /** Rows o .. o + 3, decoded to {@code w[wOff..wOff + 4 * cols)}. */
  public static void rows4(
      float[] w,
      int wOff,
      int cols,
      float[] x,
      int tokens,
      float[] out,
      int outStride,
      int o,
      float[] tmp) {
    QuadRowGemm.rows4(w, wOff, cols, x, tokens, out, outStride, o, tmp);
  }

  /** Row o, decoded to {@code w[wOff..wOff + cols)}. */
  public static void rows1(
      float[] w,
      int wOff,
      int cols,
      float[] x,
      int tokens,
      float[] out,
      int outStride,
      int o,
      float[] tmp) {
    GemmKernels.arrayRows1(w, wOff, cols, x, tokens, out, outStride, o, tmp);
  }

  /**
   * The plain reference: a scalar dot product per output, summed left to right. Fast kernels are
   * tested against it.
   */
  public static void reference(
      float[] w, int rows, int cols, float[] x, int tokens, float[] out, int outStride) {
    for (int t = 0; t < tokens; t++) {
      for (int o = 0; o < rows; o++) {
        double s = 0;
        for (int i = 0; i < cols; i++) {
          s += (double) w[o * cols + i] * x[t * cols + i];
        }
        out[t * outStride + o] = (float) s;
      }
    }
  }
}
