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
 * and lanes add up as ints (the JDK 17 Vector API has no intrinsic float-to-int conversion). The
 * mins' sum (8 products of at most 63 x 4064) is exact in floats as it is. Each super-block's
 * integer sums are therefore the ones {@link KQuantDots} computes for a token alone, and so is the
 * result, bit for bit.
 */
final class KQuantTile {
  private static final VectorSpecies<Float> S = FloatVector.SPECIES_256;
  private static final VectorSpecies<Integer> I = IntVector.SPECIES_256;
  private static final int SUPER = 256;
  private static final int SPAN = KQuantDots.SPAN;

  /** 1.5 * 2^23: integers within 2^22 of it are floats, with bits {@code BIAS} + the integer. */
  private static final float MAGIC = 12582912f;

  private static final int BIAS = Float.floatToRawIntBits(MAGIC);

  /** Per thread: the integer sums of a tile's outputs, super-block by super-block. */
  private static final ThreadLocal<int[][]> SUMS =
      ThreadLocal.withInitial(() -> new int[][] {new int[0], new int[0]});

  private KQuantTile() {}

  /** The integer sum of a super-block's four quarters as accumulated into {@code bits}. */
  private static int isum(IntVector bits) {
    // Wraps around, as the biases do: the difference is the exact sum.
    return bits.reduceLanes(VectorOperators.ADD) - 4 * 8 * BIAS;
  }

  private static IntVector bits(FloatVector acc) {
    return acc.reinterpretAsInts();
  }

  /** The mins' sum of the super-block at {@code w[wb..]} with the token's at {@code x[xb..]}. */
  static int msum(float[] w, int wb, float[] x, int xb) {
    return (int)
        FloatVector.fromArray(S, w, wb + SUPER)
            .mul(FloatVector.fromArray(S, x, xb + SUPER))
            .reduceLanes(VectorOperators.ADD);
  }

  /** This thread's scratch for {@link #tile} on rows of {@code cols} columns. */
  static int[][] sums(int cols) {
    // Two rows by three tokens here, four by four in KQuantQuadTile.
    int n = KQuantQuadTile.OUTPUTS * (cols / SUPER);
    int[][] v = SUMS.get();
    if (v[0].length < n) {
      v[0] = new int[n];
      v[1] = new int[n];
    }
    return v;
  }

  /**
   * Outputs of rows {@code row..row + rows} ({@code rows} 1 or 2; decoded at {@code w[wOff + i *
   * span..]}) for tokens {@code t..t + tokens} ({@code tokens} 1 to 3) into {@code out[token *
   * stride + o + i]}; {@code sums} from {@link #sums}.
   */
  static void tile(
      int[][] sums,
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
    int blocks = m.cols() / SUPER;
    int span = blocks * SPAN;
    if (rows == 2 && tokens == 3) {
      tile2x3(m.hasMins(), blocks, w, wOff, a.floats(), t * span, sums[0], sums[1]);
    } else {
      for (int i = 0; i < rows; i++) {
        for (int j = 0; j < tokens; j++) {
          single(
              m.hasMins(),
              blocks,
              w,
              wOff + i * span,
              a.floats(),
              (t + j) * span,
              sums[0],
              sums[1],
              (3 * i + j) * blocks);
        }
      }
    }
    // The scales after the multiply-adds, in a loop of their own: the same formula as a token
    // alone ({@link KQuantDots#combine}).
    float[] scales = m.scales();
    boolean mins = m.hasMins();
    for (int i = 0; i < rows; i++) {
      for (int j = 0; j < tokens; j++) {
        int at = (3 * i + j) * blocks;
        out[(t + j) * stride + o + i] =
            KQuantDots.combineRow(
                scales, (row + i) * blocks, blocks, mins, sums[0], sums[1], at, a, t + j);
      }
    }
  }

  /** One row and one token; the four quarters of a super-block in chains of their own. */
  private static void single(
      boolean mins,
      int blocks,
      float[] w,
      int wOff,
      float[] x,
      int xOff,
      int[] isums,
      int[] msums,
      int at) {
    FloatVector magic = FloatVector.broadcast(S, MAGIC);
    for (int b = 0; b < blocks; b++) {
      int wb = wOff + b * SPAN;
      int xb = xOff + b * SPAN;
      FloatVector q0 = magic;
      FloatVector q1 = magic;
      FloatVector q2 = magic;
      FloatVector q3 = magic;
      for (int i = 0; i < 64; i += 8) {
        q0 = FloatVector.fromArray(S, w, wb + i).fma(FloatVector.fromArray(S, x, xb + i), q0);
        q1 =
            FloatVector.fromArray(S, w, wb + 64 + i)
                .fma(FloatVector.fromArray(S, x, xb + 64 + i), q1);
        q2 =
            FloatVector.fromArray(S, w, wb + 128 + i)
                .fma(FloatVector.fromArray(S, x, xb + 128 + i), q2);
        q3 =
            FloatVector.fromArray(S, w, wb + 192 + i)
                .fma(FloatVector.fromArray(S, x, xb + 192 + i), q3);
      }
      isums[at + b] = isum(bits(q0).add(bits(q1)).add(bits(q2)).add(bits(q3)));
      msums[at + b] = mins ? msum(w, wb, x, xb) : 0;
    }
  }

  /** Rows at {@code w[wOff..]} and one span on, tokens at {@code x[xOff..]} and the next two. */
  private static void tile2x3(
      boolean mins,
      int blocks,
      float[] w,
      int wOff,
      float[] x,
      int xOff,
      int[] isums,
      int[] msums) {
    int span = blocks * SPAN;
    FloatVector magic = FloatVector.broadcast(S, MAGIC);
    for (int b = 0; b < blocks; b++) {
      int w0 = wOff + b * SPAN;
      int w1 = w0 + span;
      int x0 = xOff + b * SPAN;
      int x1 = x0 + span;
      int x2 = x1 + span;
      IntVector b00 = IntVector.zero(I);
      IntVector b01 = IntVector.zero(I);
      IntVector b02 = IntVector.zero(I);
      IntVector b10 = IntVector.zero(I);
      IntVector b11 = IntVector.zero(I);
      IntVector b12 = IntVector.zero(I);
      for (int q = 0; q < SUPER; q += 64) {
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
      // Outputs in the order tile() reads them: row-major, three tokens a row.
      isums[b] = isum(b00);
      isums[blocks + b] = isum(b01);
      isums[2 * blocks + b] = isum(b02);
      isums[3 * blocks + b] = isum(b10);
      isums[4 * blocks + b] = isum(b11);
      isums[5 * blocks + b] = isum(b12);
      if (mins) {
        msums[b] = msum(w, w0, x, x0);
        msums[blocks + b] = msum(w, w0, x, x1);
        msums[2 * blocks + b] = msum(w, w0, x, x2);
        msums[3 * blocks + b] = msum(w, w1, x, x0);
        msums[4 * blocks + b] = msum(w, w1, x, x1);
        msums[5 * blocks + b] = msum(w, w1, x, x2);
      }
    }
  }
}
