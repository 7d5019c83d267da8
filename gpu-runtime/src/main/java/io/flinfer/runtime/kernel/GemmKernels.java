package io.flinfer.runtime.kernel;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * The register-tiled micro-kernels behind {@link Gemm}: tiles of tokens x weight rows, each output
 * with one vector accumulator over the whole row, its lanes summed in a fixed order, then the
 * scalar tail. Every tile shape therefore gives each output the same bits.
 */
final class GemmKernels {
  static final VectorSpecies<Float> S = FloatVector.SPECIES_256;
  static final int LANES = 8;

  private GemmKernels() {}

  /** Lanes summed left to right; constant lane indices keep each extract an intrinsic. */
  static float sumLanes(FloatVector v) {
    float s = v.lane(0);
    s += v.lane(1);
    s += v.lane(2);
    s += v.lane(3);
    s += v.lane(4);
    s += v.lane(5);
    s += v.lane(6);
    s += v.lane(7);
    return s;
  }

  private static float finishBuffer(
      FloatVector acc, ByteBuffer w, int wRow, float[] x, int xRow, int colsV, int cols) {
    float s = sumLanes(acc);
    for (int i = colsV; i < cols; i++) {
      s += w.getFloat(wRow + i * 4) * x[xRow + i];
    }
    return s;
  }

  private static float finishArray(
      FloatVector acc, float[] w, int wRow, float[] x, int xRow, int colsV, int cols) {
    float s = sumLanes(acc);
    for (int i = colsV; i < cols; i++) {
      s += w[wRow + i] * x[xRow + i];
    }
    return s;
  }

  /**
   * Whether the next tile takes 6 tokens: only while what is left still splits into tiles of 6 and
   * 4 (8 is two 4s, not 6 + 1 + 1), since single-token tiles re-read the weights.
   */
  private static boolean sixTile(int left) {
    return left == 6 || left >= 10;
  }

  /** Rows [oFrom, oTo) of a float32 matrix in a little-endian buffer, all tokens. */
  static void bufferRows(
      ByteBuffer w,
      int cols,
      float[] x,
      int tokens,
      float[] out,
      int outStride,
      int oFrom,
      int oTo) {
    int o = oFrom;
    for (; o + 2 <= oTo; o += 2) {
      int t = 0;
      for (; sixTile(tokens - t); t += 6) {
        bufT6R2(w, cols, x, t, out, outStride, o);
      }
      for (; t + 4 <= tokens; t += 4) {
        bufT4R2(w, cols, x, t, out, outStride, o);
      }
      for (; t < tokens; t++) {
        bufT1R2(w, cols, x, t, out, outStride, o);
      }
    }
    for (; o < oTo; o++) {
      for (int t = 0; t < tokens; t++) {
        bufT1R1(w, cols, x, t, out, outStride, o);
      }
    }
  }

  /** Two decoded rows at {@code w[wOff..]} (row o, then row o + 1), all tokens. */
  static void arrayRows2(
      float[] w, int wOff, int cols, float[] x, int tokens, float[] out, int outStride, int o) {
    int t = 0;
    for (; sixTile(tokens - t); t += 6) {
      arrT6R2(w, wOff, cols, x, t, out, outStride, o);
    }
    for (; t + 4 <= tokens; t += 4) {
      arrT4R2(w, wOff, cols, x, t, out, outStride, o);
    }
    for (; t < tokens; t++) {
      arrT1R2(w, wOff, cols, x, t, out, outStride, o);
    }
  }

  /** One decoded row at {@code w[wOff..]}, all tokens. */
  static void arrayRows1(
      float[] w, int wOff, int cols, float[] x, int tokens, float[] out, int outStride, int o) {
    for (int t = 0; t < tokens; t++) {
      arrT1R1(w, wOff, cols, x, t, out, outStride, o);
    }
  }

  private static void bufT4R2(
      ByteBuffer w, int cols, float[] x, int t, float[] out, int outStride, int o) {
    int colsV = cols - cols % LANES;
    int w0 = (o + 0) * cols * 4;
    int w1 = (o + 1) * cols * 4;
    int x0 = (t + 0) * cols;
    int x1 = (t + 1) * cols;
    int x2 = (t + 2) * cols;
    int x3 = (t + 3) * cols;
    FloatVector a00 = FloatVector.zero(S);
    FloatVector a01 = FloatVector.zero(S);
    FloatVector a10 = FloatVector.zero(S);
    FloatVector a11 = FloatVector.zero(S);
    FloatVector a20 = FloatVector.zero(S);
    FloatVector a21 = FloatVector.zero(S);
    FloatVector a30 = FloatVector.zero(S);
    FloatVector a31 = FloatVector.zero(S);
    for (int i = 0; i < colsV; i += LANES) {
      FloatVector v0 = FloatVector.fromByteBuffer(S, w, w0 + i * 4, ByteOrder.LITTLE_ENDIAN);
      FloatVector v1 = FloatVector.fromByteBuffer(S, w, w1 + i * 4, ByteOrder.LITTLE_ENDIAN);
      FloatVector u0 = FloatVector.fromArray(S, x, x0 + i);
      a00 = v0.fma(u0, a00);
      a01 = v1.fma(u0, a01);
      FloatVector u1 = FloatVector.fromArray(S, x, x1 + i);
      a10 = v0.fma(u1, a10);
      a11 = v1.fma(u1, a11);
      FloatVector u2 = FloatVector.fromArray(S, x, x2 + i);
      a20 = v0.fma(u2, a20);
      a21 = v1.fma(u2, a21);
      FloatVector u3 = FloatVector.fromArray(S, x, x3 + i);
      a30 = v0.fma(u3, a30);
      a31 = v1.fma(u3, a31);
    }
    out[(t + 0) * outStride + o + 0] = finishBuffer(a00, w, w0, x, x0, colsV, cols);
    out[(t + 0) * outStride + o + 1] = finishBuffer(a01, w, w1, x, x0, colsV, cols);
    out[(t + 1) * outStride + o + 0] = finishBuffer(a10, w, w0, x, x1, colsV, cols);
    out[(t + 1) * outStride + o + 1] = finishBuffer(a11, w, w1, x, x1, colsV, cols);
    out[(t + 2) * outStride + o + 0] = finishBuffer(a20, w, w0, x, x2, colsV, cols);
    out[(t + 2) * outStride + o + 1] = finishBuffer(a21, w, w1, x, x2, colsV, cols);
    out[(t + 3) * outStride + o + 0] = finishBuffer(a30, w, w0, x, x3, colsV, cols);
    out[(t + 3) * outStride + o + 1] = finishBuffer(a31, w, w1, x, x3, colsV, cols);
  }

  private static void bufT1R2(
      ByteBuffer w, int cols, float[] x, int t, float[] out, int outStride, int o) {
    int colsV = cols - cols % LANES;
    int w0 = (o + 0) * cols * 4;
    int w1 = (o + 1) * cols * 4;
    int x0 = (t + 0) * cols;
    FloatVector a00 = FloatVector.zero(S);
    FloatVector a01 = FloatVector.zero(S);
    for (int i = 0; i < colsV; i += LANES) {
      FloatVector v0 = FloatVector.fromByteBuffer(S, w, w0 + i * 4, ByteOrder.LITTLE_ENDIAN);
      FloatVector v1 = FloatVector.fromByteBuffer(S, w, w1 + i * 4, ByteOrder.LITTLE_ENDIAN);
      FloatVector u0 = FloatVector.fromArray(S, x, x0 + i);
      a00 = v0.fma(u0, a00);
      a01 = v1.fma(u0, a01);
    }
    out[(t + 0) * outStride + o + 0] = finishBuffer(a00, w, w0, x, x0, colsV, cols);
    out[(t + 0) * outStride + o + 1] = finishBuffer(a01, w, w1, x, x0, colsV, cols);
  }

  private static void bufT1R1(
      ByteBuffer w, int cols, float[] x, int t, float[] out, int outStride, int o) {
    int colsV = cols - cols % LANES;
    int w0 = (o + 0) * cols * 4;
    int x0 = (t + 0) * cols;
    FloatVector a00 = FloatVector.zero(S);
    for (int i = 0; i < colsV; i += LANES) {
      FloatVector v0 = FloatVector.fromByteBuffer(S, w, w0 + i * 4, ByteOrder.LITTLE_ENDIAN);
      FloatVector u0 = FloatVector.fromArray(S, x, x0 + i);
      a00 = v0.fma(u0, a00);
    }
    out[(t + 0) * outStride + o + 0] = finishBuffer(a00, w, w0, x, x0, colsV, cols);
  }

  private static void arrT4R2(
      float[] w, int wOff, int cols, float[] x, int t, float[] out, int outStride, int o) {
    int colsV = cols - cols % LANES;
    int w0 = wOff + 0 * cols;
    int w1 = wOff + 1 * cols;
    int x0 = (t + 0) * cols;
    int x1 = (t + 1) * cols;
    int x2 = (t + 2) * cols;
    int x3 = (t + 3) * cols;
    FloatVector a00 = FloatVector.zero(S);
    FloatVector a01 = FloatVector.zero(S);
    FloatVector a10 = FloatVector.zero(S);
    FloatVector a11 = FloatVector.zero(S);
    FloatVector a20 = FloatVector.zero(S);
    FloatVector a21 = FloatVector.zero(S);
    FloatVector a30 = FloatVector.zero(S);
    FloatVector a31 = FloatVector.zero(S);
    for (int i = 0; i < colsV; i += LANES) {
      FloatVector v0 = FloatVector.fromArray(S, w, w0 + i);
      FloatVector v1 = FloatVector.fromArray(S, w, w1 + i);
      FloatVector u0 = FloatVector.fromArray(S, x, x0 + i);
      a00 = v0.fma(u0, a00);
      a01 = v1.fma(u0, a01);
      FloatVector u1 = FloatVector.fromArray(S, x, x1 + i);
      a10 = v0.fma(u1, a10);
      a11 = v1.fma(u1, a11);
      FloatVector u2 = FloatVector.fromArray(S, x, x2 + i);
      a20 = v0.fma(u2, a20);
      a21 = v1.fma(u2, a21);
      FloatVector u3 = FloatVector.fromArray(S, x, x3 + i);
      a30 = v0.fma(u3, a30);
      a31 = v1.fma(u3, a31);
    }
    out[(t + 0) * outStride + o + 0] = finishArray(a00, w, w0, x, x0, colsV, cols);
    out[(t + 0) * outStride + o + 1] = finishArray(a01, w, w1, x, x0, colsV, cols);
    out[(t + 1) * outStride + o + 0] = finishArray(a10, w, w0, x, x1, colsV, cols);
    out[(t + 1) * outStride + o + 1] = finishArray(a11, w, w1, x, x1, colsV, cols);
    out[(t + 2) * outStride + o + 0] = finishArray(a20, w, w0, x, x2, colsV, cols);
    out[(t + 2) * outStride + o + 1] = finishArray(a21, w, w1, x, x2, colsV, cols);
    out[(t + 3) * outStride + o + 0] = finishArray(a30, w, w0, x, x3, colsV, cols);
    out[(t + 3) * outStride + o + 1] = finishArray(a31, w, w1, x, x3, colsV, cols);
  }

  private static void arrT1R2(
      float[] w, int wOff, int cols, float[] x, int t, float[] out, int outStride, int o) {
    int colsV = cols - cols % LANES;
    int w0 = wOff + 0 * cols;
    int w1 = wOff + 1 * cols;
    int x0 = (t + 0) * cols;
    FloatVector a00 = FloatVector.zero(S);
    FloatVector a01 = FloatVector.zero(S);
    for (int i = 0; i < colsV; i += LANES) {
      FloatVector v0 = FloatVector.fromArray(S, w, w0 + i);
      FloatVector v1 = FloatVector.fromArray(S, w, w1 + i);
      FloatVector u0 = FloatVector.fromArray(S, x, x0 + i);
      a00 = v0.fma(u0, a00);
      a01 = v1.fma(u0, a01);
    }
    out[(t + 0) * outStride + o + 0] = finishArray(a00, w, w0, x, x0, colsV, cols);
    out[(t + 0) * outStride + o + 1] = finishArray(a01, w, w1, x, x0, colsV, cols);
  }

  private static void arrT1R1(
      float[] w, int wOff, int cols, float[] x, int t, float[] out, int outStride, int o) {
    int colsV = cols - cols % LANES;
    int w0 = wOff + 0 * cols;
    int x0 = (t + 0) * cols;
    FloatVector a00 = FloatVector.zero(S);
    for (int i = 0; i < colsV; i += LANES) {
      FloatVector v0 = FloatVector.fromArray(S, w, w0 + i);
      FloatVector u0 = FloatVector.fromArray(S, x, x0 + i);
      a00 = v0.fma(u0, a00);
    }
    out[(t + 0) * outStride + o + 0] = finishArray(a00, w, w0, x, x0, colsV, cols);
  }

  private static void bufT6R2(
      ByteBuffer w, int cols, float[] x, int t, float[] out, int outStride, int o) {
    int colsV = cols - cols % LANES;
    int w0 = (o + 0) * cols * 4;
    int w1 = (o + 1) * cols * 4;
    int x0 = (t + 0) * cols;
    int x1 = (t + 1) * cols;
    int x2 = (t + 2) * cols;
    int x3 = (t + 3) * cols;
    int x4 = (t + 4) * cols;
    int x5 = (t + 5) * cols;
    FloatVector a00 = FloatVector.zero(S);
    FloatVector a01 = FloatVector.zero(S);
    FloatVector a10 = FloatVector.zero(S);
    FloatVector a11 = FloatVector.zero(S);
    FloatVector a20 = FloatVector.zero(S);
    FloatVector a21 = FloatVector.zero(S);
    FloatVector a30 = FloatVector.zero(S);
    FloatVector a31 = FloatVector.zero(S);
    FloatVector a40 = FloatVector.zero(S);
    FloatVector a41 = FloatVector.zero(S);
    FloatVector a50 = FloatVector.zero(S);
    FloatVector a51 = FloatVector.zero(S);
    for (int i = 0; i < colsV; i += LANES) {
      FloatVector v0 = FloatVector.fromByteBuffer(S, w, w0 + i * 4, ByteOrder.LITTLE_ENDIAN);
      FloatVector v1 = FloatVector.fromByteBuffer(S, w, w1 + i * 4, ByteOrder.LITTLE_ENDIAN);
      FloatVector u0 = FloatVector.fromArray(S, x, x0 + i);
      a00 = v0.fma(u0, a00);
      a01 = v1.fma(u0, a01);
      FloatVector u1 = FloatVector.fromArray(S, x, x1 + i);
      a10 = v0.fma(u1, a10);
      a11 = v1.fma(u1, a11);
      FloatVector u2 = FloatVector.fromArray(S, x, x2 + i);
      a20 = v0.fma(u2, a20);
      a21 = v1.fma(u2, a21);
      FloatVector u3 = FloatVector.fromArray(S, x, x3 + i);
      a30 = v0.fma(u3, a30);
      a31 = v1.fma(u3, a31);
      FloatVector u4 = FloatVector.fromArray(S, x, x4 + i);
      a40 = v0.fma(u4, a40);
      a41 = v1.fma(u4, a41);
      FloatVector u5 = FloatVector.fromArray(S, x, x5 + i);
      a50 = v0.fma(u5, a50);
      a51 = v1.fma(u5, a51);
    }
    out[(t + 0) * outStride + o + 0] = finishBuffer(a00, w, w0, x, x0, colsV, cols);
    out[(t + 0) * outStride + o + 1] = finishBuffer(a01, w, w1, x, x0, colsV, cols);
    out[(t + 1) * outStride + o + 0] = finishBuffer(a10, w, w0, x, x1, colsV, cols);
    out[(t + 1) * outStride + o + 1] = finishBuffer(a11, w, w1, x, x1, colsV, cols);
    out[(t + 2) * outStride + o + 0] = finishBuffer(a20, w, w0, x, x2, colsV, cols);
    out[(t + 2) * outStride + o + 1] = finishBuffer(a21, w, w1, x, x2, colsV, cols);
    out[(t + 3) * outStride + o + 0] = finishBuffer(a30, w, w0, x, x3, colsV, cols);
    out[(t + 3) * outStride + o + 1] = finishBuffer(a31, w, w1, x, x3, colsV, cols);
    out[(t + 4) * outStride + o + 0] = finishBuffer(a40, w, w0, x, x4, colsV, cols);
    out[(t + 4) * outStride + o + 1] = finishBuffer(a41, w, w1, x, x4, colsV, cols);
    out[(t + 5) * outStride + o + 0] = finishBuffer(a50, w, w0, x, x5, colsV, cols);
    out[(t + 5) * outStride + o + 1] = finishBuffer(a51, w, w1, x, x5, colsV, cols);
  }

  private static void arrT6R2(
      float[] w, int wOff, int cols, float[] x, int t, float[] out, int outStride, int o) {
    int colsV = cols - cols % LANES;
    int w0 = wOff + 0 * cols;
    int w1 = wOff + 1 * cols;
    int x0 = (t + 0) * cols;
    int x1 = (t + 1) * cols;
    int x2 = (t + 2) * cols;
    int x3 = (t + 3) * cols;
    int x4 = (t + 4) * cols;
    int x5 = (t + 5) * cols;
    FloatVector a00 = FloatVector.zero(S);
    FloatVector a01 = FloatVector.zero(S);
    FloatVector a10 = FloatVector.zero(S);
    FloatVector a11 = FloatVector.zero(S);
    FloatVector a20 = FloatVector.zero(S);
    FloatVector a21 = FloatVector.zero(S);
    FloatVector a30 = FloatVector.zero(S);
    FloatVector a31 = FloatVector.zero(S);
    FloatVector a40 = FloatVector.zero(S);
    FloatVector a41 = FloatVector.zero(S);
    FloatVector a50 = FloatVector.zero(S);
    FloatVector a51 = FloatVector.zero(S);
    for (int i = 0; i < colsV; i += LANES) {
      FloatVector v0 = FloatVector.fromArray(S, w, w0 + i);
      FloatVector v1 = FloatVector.fromArray(S, w, w1 + i);
      FloatVector u0 = FloatVector.fromArray(S, x, x0 + i);
      a00 = v0.fma(u0, a00);
      a01 = v1.fma(u0, a01);
      FloatVector u1 = FloatVector.fromArray(S, x, x1 + i);
      a10 = v0.fma(u1, a10);
      a11 = v1.fma(u1, a11);
      FloatVector u2 = FloatVector.fromArray(S, x, x2 + i);
      a20 = v0.fma(u2, a20);
      a21 = v1.fma(u2, a21);
      FloatVector u3 = FloatVector.fromArray(S, x, x3 + i);
      a30 = v0.fma(u3, a30);
      a31 = v1.fma(u3, a31);
      FloatVector u4 = FloatVector.fromArray(S, x, x4 + i);
      a40 = v0.fma(u4, a40);
      a41 = v1.fma(u4, a41);
      FloatVector u5 = FloatVector.fromArray(S, x, x5 + i);
      a50 = v0.fma(u5, a50);
      a51 = v1.fma(u5, a51);
    }
    out[(t + 0) * outStride + o + 0] = finishArray(a00, w, w0, x, x0, colsV, cols);
    out[(t + 0) * outStride + o + 1] = finishArray(a01, w, w1, x, x0, colsV, cols);
    out[(t + 1) * outStride + o + 0] = finishArray(a10, w, w0, x, x1, colsV, cols);
    out[(t + 1) * outStride + o + 1] = finishArray(a11, w, w1, x, x1, colsV, cols);
    out[(t + 2) * outStride + o + 0] = finishArray(a20, w, w0, x, x2, colsV, cols);
    out[(t + 2) * outStride + o + 1] = finishArray(a21, w, w1, x, x2, colsV, cols);
    out[(t + 3) * outStride + o + 0] = finishArray(a30, w, w0, x, x3, colsV, cols);
    out[(t + 3) * outStride + o + 1] = finishArray(a31, w, w1, x, x3, colsV, cols);
    out[(t + 4) * outStride + o + 0] = finishArray(a40, w, w0, x, x4, colsV, cols);
    out[(t + 4) * outStride + o + 1] = finishArray(a41, w, w1, x, x4, colsV, cols);
    out[(t + 5) * outStride + o + 0] = finishArray(a50, w, w0, x, x5, colsV, cols);
    out[(t + 5) * outStride + o + 1] = finishArray(a51, w, w1, x, x5, colsV, cols);
  }
}
