package io.flinfer.runtime.kernel;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * A batch's K-quant products from rows decoded once to integer-valued floats ({@code scale * q},
 * {@link KQuantDots#scaleMinFloats}, {@link KQuantDots#q6kFloats}) and the tokens' 8-bit
 * activations as floats: tiles of two rows by three tokens in multiply-adds, as the f32 products
 * go, and exact. Each lane starts a quarter super-block (64 values, 8 products a lane of at most
 * 4096 x 127 in magnitude, so partial sums within 2^22) at 1.5 * 2^23, where a float's ulp is 1:
 * every multiply-add is exact, and the float's bits are that integer plus a constant, so quarters
 * and lanes add up as ints (the JDK 17 Vector API has no intrinsic float-to-int conversion). Each
 * super-block's integer sum is therefore the one {@link KQuantDots} computes for a token alone, and
 * so is the result, bit for bit.
 */
final class KQuantTile {
  private static final VectorSpecies<Float> S = FloatVector.SPECIES_256;
  private static final VectorSpecies<Integer> I = IntVector.SPECIES_256;
  private static final int SUPER = 256;

  private KQuantTile() {}

  /** 1.5 * 2^23: integers within 2^22 of it are floats, with bits {@code BIAS} + the integer. */
  private static final float MAGIC = 12582912f;

  private static final int BIAS = Float.floatToRawIntBits(MAGIC);

  private static final ThreadLocal<int[]> ISUMS = ThreadLocal.withInitial(() -> new int[0]);

  /** The integer sum of a super-block's four quarters as accumulated into {@code bits}. */
  private static int isum(IntVector bits) {
    // Wraps around, as the biases do: the difference is the exact sum.
    return bits.reduceLanes(VectorOperators.ADD) - 4 * 8 * BIAS;
  }

  private static IntVector bits(FloatVector acc) {
    return acc.reinterpretAsInts();
  }

  /**
   * Outputs of rows {@code r..r + rows} ({@code rows} 1 or 2; decoded at {@code w[wOff + i *
   * cols..]}) for tokens {@code t..t + tokens} ({@code tokens} 1 to 3) into {@code out[token *
   * stride + o + i]}.
   */
  static void tile(
      KQuantWeights m,
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
    if (rows == 2 && tokens == 3) {
      tile2x3(m, row, w, wOff, a, t, out, stride, o);
      return;
    }
    for (int i = 0; i < rows; i++) {
      for (int j = t; j < t + tokens; j++) {
        out[j * stride + o + i] = single(m, row + i, w, wOff + i * m.cols(), a, j);
      }
    }
  }

  private static float single(
      KQuantWeights m, int row, float[] w, int wOff, Q8KActivations a, int t) {
    int blocks = m.cols() / SUPER;
    float[] x = a.floats();
    int xOff = t * m.cols();
    float sum = 0;
    for (int b = 0; b < blocks; b++) {
      IntVector bits = IntVector.zero(I);
      for (int q = b * SUPER; q < (b + 1) * SUPER; q += 64) {
        FloatVector acc = FloatVector.broadcast(S, MAGIC);
        for (int i = q; i < q + 64; i += 8) {
          acc =
              FloatVector.fromArray(S, w, wOff + i).fma(FloatVector.fromArray(S, x, xOff + i), acc);
        }
        bits = bits.add(bits(acc));
      }
      sum = m.combine(row, b, isum(bits), a, t, sum);
    }
    return sum;
  }

  private static void tile2x3(
      KQuantWeights m,
      int row,
      float[] w,
      int wOff,
      Q8KActivations a,
      int t,
      float[] out,
      int stride,
      int o) {
    int cols = m.cols();
    int blocks = cols / SUPER;
    float[] x = a.floats();
    int w0 = wOff;
    int w1 = wOff + cols;
    int x0 = t * cols;
    int x1 = x0 + cols;
    int x2 = x1 + cols;
    int[] isums = isums(6 * blocks);
    FloatVector magic = FloatVector.broadcast(S, MAGIC);
    for (int b = 0; b < blocks; b++) {
      IntVector b00 = IntVector.zero(I);
      IntVector b01 = IntVector.zero(I);
      IntVector b02 = IntVector.zero(I);
      IntVector b10 = IntVector.zero(I);
      IntVector b11 = IntVector.zero(I);
      IntVector b12 = IntVector.zero(I);
      for (int q = b * SUPER; q < (b + 1) * SUPER; q += 64) {
        FloatVector a00 = magic;
        FloatVector a01 = magic;
        FloatVector a02 = magic;
        FloatVector a10 = magic;
        FloatVector a11 = magic;
        FloatVector a12 = magic;
        for (int i = q; i < q + 64; i += 8) {
          FloatVector v0 = FloatVector.fromArray(S, w, w0 + i);
          FloatVector v1 = FloatVector.fromArray(S, w, w1 + i);
          FloatVector y0 = FloatVector.fromArray(S, x, x0 + i);
          FloatVector y1 = FloatVector.fromArray(S, x, x1 + i);
          FloatVector y2 = FloatVector.fromArray(S, x, x2 + i);
          a00 = v0.fma(y0, a00);
          a01 = v0.fma(y1, a01);
          a02 = v0.fma(y2, a02);
          a10 = v1.fma(y0, a10);
          a11 = v1.fma(y1, a11);
          a12 = v1.fma(y2, a12);
        }
        b00 = b00.add(bits(a00));
        b01 = b01.add(bits(a01));
        b02 = b02.add(bits(a02));
        b10 = b10.add(bits(a10));
        b11 = b11.add(bits(a11));
        b12 = b12.add(bits(a12));
      }
      isums[b] = isum(b00);
      isums[blocks + b] = isum(b01);
      isums[2 * blocks + b] = isum(b02);
      isums[3 * blocks + b] = isum(b10);
      isums[4 * blocks + b] = isum(b11);
      isums[5 * blocks + b] = isum(b12);
    }
    // The scales after the multiply-adds, in a loop of their own: the same formula as a token
    // alone ({@link KQuantDots#combine}), in scalars.
    for (int j = 0; j < 6; j++) {
      int r = row + j / 3;
      int tj = t + j % 3;
      out[tj * stride + o + j / 3] = m.combineRow(r, isums, j * blocks, a, tj);
    }
  }

  private static int[] isums(int n) {
    int[] v = ISUMS.get();
    if (v.length < n) {
      v = new int[n];
      ISUMS.set(v);
    }
    return v;
  }
}
