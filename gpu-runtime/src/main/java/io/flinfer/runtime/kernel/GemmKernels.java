package io.flinfer.runtime.kernel;

import java.nio.ByteBuffer;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * The register-tiled micro-kernels behind {@link Gemm}: tiles of tokens x weight rows, each output
 * with one vector accumulator over the whole row, its lanes summed in order, then the scalar tail.
 * Every tile shape therefore gives each output the same bits.
 *
 * <p>Accumulators leave a kernel through {@code intoArray} into a scratch of at least {@link
 * #SCRATCH} floats: passing vectors to a helper the JIT declines to inline would box them.
 */
final class GemmKernels {
  static final VectorSpecies<Float> S = FloatVector.SPECIES_256;
  static final int LANES = 8;

  /** Scratch floats a kernel call needs: up to 16 accumulators of 8 lanes. */
  static final int SCRATCH = 128;

  /**
   * Tokens per cache block: a block of activations (up to 48 x 2048 floats) stays in L2 while the
   * weight rows stream past it once per block.
   */
  private static final int TOKEN_BLOCK = 48;

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

  /** The 8 stored lanes at {@code tmp[k..k+8)} summed left to right, as {@link #sumLanes}. */
  static float sum8(float[] tmp, int k) {
    float s = tmp[k];
    s += tmp[k + 1];
    s += tmp[k + 2];
    s += tmp[k + 3];
    s += tmp[k + 4];
    s += tmp[k + 5];
    s += tmp[k + 6];
    s += tmp[k + 7];
    return s;
  }

  static float finishBuffer(
      float[] tmp, int k, ByteBuffer w, int wRow, float[] x, int xRow, int colsV, int cols) {
    float s = sum8(tmp, k);
    for (int i = colsV; i < cols; i++) {
      s += w.getFloat(wRow + i * 4) * x[xRow + i];
    }
    return s;
  }

  /**
   * Outputs of tokens [t, t + tokens) and rows o0..o3 of a tile with no scalar tail, from their
   * accumulators' lanes in {@code tmp} (token-major, row after row, eight floats each).
   */
  static void finishQuad(
      int t, int tokens, float[] out, int outStride, int o0, int o1, int o2, int o3, float[] tmp) {
    for (int k = 0; k < tokens; k++) {
      int at = (t + k) * outStride;
      out[at + o0] = sum8(tmp, 8 * (4 * k));
      out[at + o1] = sum8(tmp, 8 * (4 * k + 1));
      out[at + o2] = sum8(tmp, 8 * (4 * k + 2));
      out[at + o3] = sum8(tmp, 8 * (4 * k + 3));
    }
  }

  static float finishArray(
      float[] tmp, int k, float[] w, int wRow, float[] x, int xRow, int colsV, int cols) {
    float s = sum8(tmp, k);
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
      int oTo,
      float[] tmp) {
    if (tokens == 1) {
      // Four rows side by side, one from each quarter of the range: four sequential streams for
      // the prefetcher and four independent chains of multiply-adds, each row in its own
      // accumulator (so in the same order and bits). Neighbouring pairs of rows read at half the
      // speed on an AVX-512 EPYC (15 against 29 GB/s for the 110M shape's decode step); quarters
      // measured level on the 110M shape and 8-28% faster on the Qwen2.5-0.5B and 1B shapes.
      int quarter = (oTo - oFrom + 3) / 4;
      int last = oTo - 1;
      for (int o = oFrom; o < oFrom + quarter; o++) {
        bufT1Q4(
            w,
            cols,
            x,
            0,
            out,
            0,
            o,
            Math.min(o + quarter, last),
            Math.min(o + 2 * quarter, last),
            Math.min(o + 3 * quarter, last),
            tmp);
      }
      return;
    }
    for (int t0 = 0; t0 < tokens; t0 += TOKEN_BLOCK) {
      int t1 = Math.min(tokens, t0 + TOKEN_BLOCK);
      int o = oFrom;
      for (; o + 2 <= oTo; o += 2) {
        int t = t0;
        for (; sixTile(t1 - t); t += 6) {
          bufT6R2(w, cols, x, t, out, outStride, o, tmp);
        }
        for (; t + 4 <= t1; t += 4) {
          bufT4R2(w, cols, x, t, out, outStride, o, tmp);
        }
        for (; t < t1; t++) {
          bufT1R2(w, cols, x, t, out, outStride, o, tmp);
        }
      }
      for (; o < oTo; o++) {
        for (int t = t0; t < t1; t++) {
          bufT1R1(w, cols, x, t, out, outStride, o, tmp);
        }
      }
    }
  }

  /** Two decoded rows at {@code w[wOff..]} (row o, then row o + 1), all tokens. */
  static void arrayRows2(
      float[] w,
      int wOff,
      int cols,
      float[] x,
      int tokens,
      float[] out,
      int outStride,
      int o,
      float[] tmp) {
    int t = 0;
    for (; sixTile(tokens - t); t += 6) {
      arrT6R2(w, wOff, cols, x, t, out, outStride, o, tmp);
    }
    for (; t + 4 <= tokens; t += 4) {
      arrT4R2(w, wOff, cols, x, t, out, outStride, o, tmp);
    }
    for (; t < tokens; t++) {
      arrT1R2(w, wOff, cols, x, t, out, outStride, o, tmp);
    }
  }

  /** One decoded row at {@code w[wOff..]}, all tokens. */
  static void arrayRows1(
      float[] w,
      int wOff,
      int cols,
      float[] x,
      int tokens,
      float[] out,
      int outStride,
      int o,
      float[] tmp) {
    for (int t = 0; t < tokens; t++) {
      arrT1R1(w, wOff, cols, x, t, out, outStride, o, tmp);
    }
  }

  private static void bufT6R2(
      ByteBuffer w, int cols, float[] x, int t, float[] out, int outStride, int o, float[] tmp) {
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
      FloatVector v0 = BufferLoads.floats(S, w, w0 + i * 4);
      FloatVector v1 = BufferLoads.floats(S, w, w1 + i * 4);
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
    a00.intoArray(tmp, 0);
    a01.intoArray(tmp, 8);
    a10.intoArray(tmp, 16);
    a11.intoArray(tmp, 24);
    a20.intoArray(tmp, 32);
    a21.intoArray(tmp, 40);
    a30.intoArray(tmp, 48);
    a31.intoArray(tmp, 56);
    a40.intoArray(tmp, 64);
    a41.intoArray(tmp, 72);
    a50.intoArray(tmp, 80);
    a51.intoArray(tmp, 88);
    out[(t + 0) * outStride + o + 0] = finishBuffer(tmp, 0, w, w0, x, x0, colsV, cols);
    out[(t + 0) * outStride + o + 1] = finishBuffer(tmp, 8, w, w1, x, x0, colsV, cols);
    out[(t + 1) * outStride + o + 0] = finishBuffer(tmp, 16, w, w0, x, x1, colsV, cols);
    out[(t + 1) * outStride + o + 1] = finishBuffer(tmp, 24, w, w1, x, x1, colsV, cols);
    out[(t + 2) * outStride + o + 0] = finishBuffer(tmp, 32, w, w0, x, x2, colsV, cols);
    out[(t + 2) * outStride + o + 1] = finishBuffer(tmp, 40, w, w1, x, x2, colsV, cols);
    out[(t + 3) * outStride + o + 0] = finishBuffer(tmp, 48, w, w0, x, x3, colsV, cols);
    out[(t + 3) * outStride + o + 1] = finishBuffer(tmp, 56, w, w1, x, x3, colsV, cols);
    out[(t + 4) * outStride + o + 0] = finishBuffer(tmp, 64, w, w0, x, x4, colsV, cols);
    out[(t + 4) * outStride + o + 1] = finishBuffer(tmp, 72, w, w1, x, x4, colsV, cols);
    out[(t + 5) * outStride + o + 0] = finishBuffer(tmp, 80, w, w0, x, x5, colsV, cols);
    out[(t + 5) * outStride + o + 1] = finishBuffer(tmp, 88, w, w1, x, x5, colsV, cols);
  }

  private static void bufT4R2(
      ByteBuffer w, int cols, float[] x, int t, float[] out, int outStride, int o, float[] tmp) {
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
      FloatVector v0 = BufferLoads.floats(S, w, w0 + i * 4);
      FloatVector v1 = BufferLoads.floats(S, w, w1 + i * 4);
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
    a00.intoArray(tmp, 0);
    a01.intoArray(tmp, 8);
    a10.intoArray(tmp, 16);
    a11.intoArray(tmp, 24);
    a20.intoArray(tmp, 32);
    a21.intoArray(tmp, 40);
    a30.intoArray(tmp, 48);
    a31.intoArray(tmp, 56);
    out[(t + 0) * outStride + o + 0] = finishBuffer(tmp, 0, w, w0, x, x0, colsV, cols);
    out[(t + 0) * outStride + o + 1] = finishBuffer(tmp, 8, w, w1, x, x0, colsV, cols);
    out[(t + 1) * outStride + o + 0] = finishBuffer(tmp, 16, w, w0, x, x1, colsV, cols);
    out[(t + 1) * outStride + o + 1] = finishBuffer(tmp, 24, w, w1, x, x1, colsV, cols);
    out[(t + 2) * outStride + o + 0] = finishBuffer(tmp, 32, w, w0, x, x2, colsV, cols);
    out[(t + 2) * outStride + o + 1] = finishBuffer(tmp, 40, w, w1, x, x2, colsV, cols);
    out[(t + 3) * outStride + o + 0] = finishBuffer(tmp, 48, w, w0, x, x3, colsV, cols);
    out[(t + 3) * outStride + o + 1] = finishBuffer(tmp, 56, w, w1, x, x3, colsV, cols);
  }

  private static void bufT1R2(
      ByteBuffer w, int cols, float[] x, int t, float[] out, int outStride, int o, float[] tmp) {
    int colsV = cols - cols % LANES;
    int w0 = (o + 0) * cols * 4;
    int w1 = (o + 1) * cols * 4;
    int x0 = (t + 0) * cols;
    FloatVector a00 = FloatVector.zero(S);
    FloatVector a01 = FloatVector.zero(S);
    for (int i = 0; i < colsV; i += LANES) {
      FloatVector v0 = BufferLoads.floats(S, w, w0 + i * 4);
      FloatVector v1 = BufferLoads.floats(S, w, w1 + i * 4);
      FloatVector u0 = FloatVector.fromArray(S, x, x0 + i);
      a00 = v0.fma(u0, a00);
      a01 = v1.fma(u0, a01);
    }
    a00.intoArray(tmp, 0);
    a01.intoArray(tmp, 8);
    out[(t + 0) * outStride + o + 0] = finishBuffer(tmp, 0, w, w0, x, x0, colsV, cols);
    out[(t + 0) * outStride + o + 1] = finishBuffer(tmp, 8, w, w1, x, x0, colsV, cols);
  }

  /** One token times rows o0..o3 (a quarter shorter than the first repeats its last row). */
  /**
   * Rows o0..o3 of {@code w} times the token at {@code x[xOff..]}, into {@code out[at + o]}: four
   * rows side by side, each in its own accumulator.
   */
  static void bufT1Q4(
      ByteBuffer w,
      int cols,
      float[] x,
      int xOff,
      float[] out,
      int at,
      int o0,
      int o1,
      int o2,
      int o3,
      float[] tmp) {
    int colsV = cols - cols % LANES;
    int w0 = o0 * cols * 4;
    int w1 = o1 * cols * 4;
    int w2 = o2 * cols * 4;
    int w3 = o3 * cols * 4;
    FloatVector a0 = FloatVector.zero(S);
    FloatVector a1 = a0;
    FloatVector a2 = a0;
    FloatVector a3 = a0;
    for (int i = 0; i < colsV; i += LANES) {
      FloatVector u = FloatVector.fromArray(S, x, xOff + i);
      a0 = BufferLoads.floats(S, w, w0 + i * 4).fma(u, a0);
      a1 = BufferLoads.floats(S, w, w1 + i * 4).fma(u, a1);
      a2 = BufferLoads.floats(S, w, w2 + i * 4).fma(u, a2);
      a3 = BufferLoads.floats(S, w, w3 + i * 4).fma(u, a3);
    }
    a0.intoArray(tmp, 0);
    a1.intoArray(tmp, 8);
    a2.intoArray(tmp, 16);
    a3.intoArray(tmp, 24);
    out[at + o0] = finishBuffer(tmp, 0, w, w0, x, xOff, colsV, cols);
    out[at + o1] = finishBuffer(tmp, 8, w, w1, x, xOff, colsV, cols);
    out[at + o2] = finishBuffer(tmp, 16, w, w2, x, xOff, colsV, cols);
    out[at + o3] = finishBuffer(tmp, 24, w, w3, x, xOff, colsV, cols);
  }

  private static void bufT1R1(
      ByteBuffer w, int cols, float[] x, int t, float[] out, int outStride, int o, float[] tmp) {
    int colsV = cols - cols % LANES;
    int w0 = (o + 0) * cols * 4;
    int x0 = (t + 0) * cols;
    FloatVector a00 = FloatVector.zero(S);
    for (int i = 0; i < colsV; i += LANES) {
      FloatVector v0 = BufferLoads.floats(S, w, w0 + i * 4);
      FloatVector u0 = FloatVector.fromArray(S, x, x0 + i);
      a00 = v0.fma(u0, a00);
    }
    a00.intoArray(tmp, 0);
    out[(t + 0) * outStride + o + 0] = finishBuffer(tmp, 0, w, w0, x, x0, colsV, cols);
  }

  private static void arrT6R2(
      float[] w,
      int wOff,
      int cols,
      float[] x,
      int t,
      float[] out,
      int outStride,
      int o,
      float[] tmp) {
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
    a00.intoArray(tmp, 0);
    a01.intoArray(tmp, 8);
    a10.intoArray(tmp, 16);
    a11.intoArray(tmp, 24);
    a20.intoArray(tmp, 32);
    a21.intoArray(tmp, 40);
    a30.intoArray(tmp, 48);
    a31.intoArray(tmp, 56);
    a40.intoArray(tmp, 64);
    a41.intoArray(tmp, 72);
    a50.intoArray(tmp, 80);
    a51.intoArray(tmp, 88);
    out[(t + 0) * outStride + o + 0] = finishArray(tmp, 0, w, w0, x, x0, colsV, cols);
    out[(t + 0) * outStride + o + 1] = finishArray(tmp, 8, w, w1, x, x0, colsV, cols);
    out[(t + 1) * outStride + o + 0] = finishArray(tmp, 16, w, w0, x, x1, colsV, cols);
    out[(t + 1) * outStride + o + 1] = finishArray(tmp, 24, w, w1, x, x1, colsV, cols);
    out[(t + 2) * outStride + o + 0] = finishArray(tmp, 32, w, w0, x, x2, colsV, cols);
    out[(t + 2) * outStride + o + 1] = finishArray(tmp, 40, w, w1, x, x2, colsV, cols);
    out[(t + 3) * outStride + o + 0] = finishArray(tmp, 48, w, w0, x, x3, colsV, cols);
    out[(t + 3) * outStride + o + 1] = finishArray(tmp, 56, w, w1, x, x3, colsV, cols);
    out[(t + 4) * outStride + o + 0] = finishArray(tmp, 64, w, w0, x, x4, colsV, cols);
    out[(t + 4) * outStride + o + 1] = finishArray(tmp, 72, w, w1, x, x4, colsV, cols);
    out[(t + 5) * outStride + o + 0] = finishArray(tmp, 80, w, w0, x, x5, colsV, cols);
    out[(t + 5) * outStride + o + 1] = finishArray(tmp, 88, w, w1, x, x5, colsV, cols);
  }

  private static void arrT4R2(
      float[] w,
      int wOff,
      int cols,
      float[] x,
      int t,
      float[] out,
      int outStride,
      int o,
      float[] tmp) {
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
    a00.intoArray(tmp, 0);
    a01.intoArray(tmp, 8);
    a10.intoArray(tmp, 16);
    a11.intoArray(tmp, 24);
    a20.intoArray(tmp, 32);
    a21.intoArray(tmp, 40);
    a30.intoArray(tmp, 48);
    a31.intoArray(tmp, 56);
    out[(t + 0) * outStride + o + 0] = finishArray(tmp, 0, w, w0, x, x0, colsV, cols);
    out[(t + 0) * outStride + o + 1] = finishArray(tmp, 8, w, w1, x, x0, colsV, cols);
    out[(t + 1) * outStride + o + 0] = finishArray(tmp, 16, w, w0, x, x1, colsV, cols);
    out[(t + 1) * outStride + o + 1] = finishArray(tmp, 24, w, w1, x, x1, colsV, cols);
    out[(t + 2) * outStride + o + 0] = finishArray(tmp, 32, w, w0, x, x2, colsV, cols);
    out[(t + 2) * outStride + o + 1] = finishArray(tmp, 40, w, w1, x, x2, colsV, cols);
    out[(t + 3) * outStride + o + 0] = finishArray(tmp, 48, w, w0, x, x3, colsV, cols);
    out[(t + 3) * outStride + o + 1] = finishArray(tmp, 56, w, w1, x, x3, colsV, cols);
  }

  private static void arrT1R2(
      float[] w,
      int wOff,
      int cols,
      float[] x,
      int t,
      float[] out,
      int outStride,
      int o,
      float[] tmp) {
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
    a00.intoArray(tmp, 0);
    a01.intoArray(tmp, 8);
    out[(t + 0) * outStride + o + 0] = finishArray(tmp, 0, w, w0, x, x0, colsV, cols);
    out[(t + 0) * outStride + o + 1] = finishArray(tmp, 8, w, w1, x, x0, colsV, cols);
  }

  private static void arrT1R1(
      float[] w,
      int wOff,
      int cols,
      float[] x,
      int t,
      float[] out,
      int outStride,
      int o,
      float[] tmp) {
    int colsV = cols - cols % LANES;
    int w0 = wOff + 0 * cols;
    int x0 = (t + 0) * cols;
    FloatVector a00 = FloatVector.zero(S);
    for (int i = 0; i < colsV; i += LANES) {
      FloatVector v0 = FloatVector.fromArray(S, w, w0 + i);
      FloatVector u0 = FloatVector.fromArray(S, x, x0 + i);
      a00 = v0.fma(u0, a00);
    }
    a00.intoArray(tmp, 0);
    out[(t + 0) * outStride + o + 0] = finishArray(tmp, 0, w, w0, x, x0, colsV, cols);
  }
}
