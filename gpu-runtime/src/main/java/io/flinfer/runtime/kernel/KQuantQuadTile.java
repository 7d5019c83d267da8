package io.flinfer.runtime.kernel;

import jdk.incubator.vector.DoubleVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * A batch's K-quant products with 8-bit activations in tiles of four decoded rows by up to four
 * tokens, for CPUs with the registers ({@link QuadRowGemm#AVAILABLE}): {@link KQuantTile}'s work
 * with a quarter fewer loads per multiply-add.
 *
 * <p>Every product of a decoded weight ({@code scale * q}, at most 4096 in magnitude) and an 8-bit
 * activation (at most 127) is an integer of at most 520,192, so a lane's 32 products of a
 * super-block and each partial sum stay under 2^24: a float holds them exactly, every multiply-add
 * is exact, and the accumulators start from zero. At the end of a super-block each accumulator's
 * lanes are stored and summed as doubles (exact: integers far below 2^53), so the super-block's
 * integer sums are the ones {@link KQuantDots} computes for a token alone, and so is the result,
 * bit for bit.
 */
final class KQuantQuadTile {
  private static final VectorSpecies<Float> S = FloatVector.SPECIES_256;
  private static final VectorSpecies<Double> D = DoubleVector.SPECIES_512;
  private static final int SUPER = 256;
  private static final int SPAN = KQuantDots.SPAN;

  /** Tokens a tile takes: four rows by four tokens keep 16 accumulators in registers. */
  static final int TOKENS = 4;

  /** Outputs of one tile: four rows by {@link #TOKENS} tokens. */
  static final int OUTPUTS = 4 * TOKENS;

  /** Per thread: the lanes of a tile's outputs, super-block by super-block. */
  private static final ThreadLocal<float[]> LANES = ThreadLocal.withInitial(() -> new float[0]);

  private KQuantQuadTile() {}

  /**
   * Outputs of the four rows {@code row..row + 4} (decoded at {@code w[wOff + i * span..]}) for the
   * tokens {@code t..t + tokens} ({@code tokens} 1 to 4) into {@code out[token * stride + o + i]};
   * {@code sums} from {@link KQuantTile#sums}.
   */
  static void tile(
      int[][] sums,
      KQuantWeights m,
      int row,
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
    float[] x = a.floats();
    int xOff = t * span;
    float[] lanes = lanes(m.cols());
    // A super-block at a time, so that each lane's sum stays exact; the multiply-adds are the f32
    // tiles' ({@link QuadRowGemm}).
    int runs = 8 * blocks;
    for (int b = 0; b < blocks; b++) {
      int wb = wOff + b * SPAN;
      int xb = xOff + b * SPAN;
      if (tokens == 4) {
        QuadRowGemm.lanes4x4(w, wb, span, x, xb, span, SUPER, lanes, 8 * b, runs);
      } else if (tokens == 2) {
        QuadRowGemm.lanes2x4(w, wb, span, x, xb, span, SUPER, lanes, 8 * b, runs);
      } else {
        for (int j = 0; j < tokens; j++) {
          QuadRowGemm.lanes1x4(
              w, wb, span, x, xb + j * span, span, SUPER, lanes, 8 * (4 * j * blocks + b), runs);
        }
      }
    }
    int[] isums = sums[0];
    int[] msums = sums[1];
    exactSums(lanes, 4 * tokens * blocks, isums);
    boolean mins = m.hasMins();
    for (int j = 0; j < tokens; j++) {
      for (int i = 0; i < 4; i++) {
        int at = (4 * j + i) * blocks;
        for (int b = 0; mins && b < blocks; b++) {
          msums[at + b] =
              KQuantTile.msum(w, wOff + i * span + b * SPAN, x, xOff + j * span + b * SPAN);
        }
        out[(t + j) * stride + o + i] =
            KQuantDots.combineRow(
                m.scales(), (row + i) * blocks, blocks, mins, isums, msums, at, a, t + j);
      }
    }
  }

  /** This thread's scratch for the lanes of a tile's outputs on rows of {@code cols} columns. */
  private static float[] lanes(int cols) {
    float[] v = LANES.get();
    int n = OUTPUTS * (cols / SUPER) * 8;
    if (v.length < n) {
      v = new float[n];
      LANES.set(v);
    }
    return v;
  }

  /** The exact integer sums of {@code n} runs of 8 integer-valued floats in {@code lanes}. */
  private static void exactSums(float[] lanes, int n, int[] isums) {
    for (int k = 0; k < n; k++) {
      isums[k] =
          (int)
              ((DoubleVector)
                      FloatVector.fromArray(S, lanes, 8 * k)
                          .convertShape(VectorOperators.F2D, D, 0))
                  .reduceLanes(VectorOperators.ADD);
    }
  }

  /*
   * Output (row i, token j) of a tile keeps its super-block b's 8 lanes at lanes[8 * ((4 * j + i)
   * * blocks + b)]: token-major, as tile() reads them.
   */
}
