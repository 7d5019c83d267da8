package io.flinfer.runtime.kernel;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * The largest value in each of eight lanes over the rows of a row-major array: the softmax's
 * maximum for queries held in lanes. Four independent chains: a vector maximum with Java's
 * semantics (NaN and signed zeros) is a sequence of several instructions, and one running maximum
 * bounded the loops it sat in. The maximum of a set does not depend on the order it is taken in.
 */
final class LaneMax {
  private static final VectorSpecies<Float> S = FloatVector.SPECIES_256;

  private LaneMax() {}

  /**
   * Lane-wise maximum of {@code a[from + j * stride .. + 8)} for j in [0, rows), into {@code
   * out[outOff .. + 8)}: through an array, as a vector returned from a call the compiler leaves out
   * of line is boxed.
   */
  static void of(float[] a, int from, int rows, int stride, float[] out, int outOff) {
    FloatVector m0 = FloatVector.broadcast(S, Float.NEGATIVE_INFINITY);
    FloatVector m1 = m0;
    FloatVector m2 = m0;
    FloatVector m3 = m0;
    int j = 0;
    for (; j + 4 <= rows; j += 4) {
      int at = from + j * stride;
      m0 = m0.max(FloatVector.fromArray(S, a, at));
      m1 = m1.max(FloatVector.fromArray(S, a, at + stride));
      m2 = m2.max(FloatVector.fromArray(S, a, at + 2 * stride));
      m3 = m3.max(FloatVector.fromArray(S, a, at + 3 * stride));
    }
    for (; j < rows; j++) {
      m0 = m0.max(FloatVector.fromArray(S, a, from + j * stride));
    }
    m0.max(m1).max(m2.max(m3)).intoArray(out, outOff);
  }
}
