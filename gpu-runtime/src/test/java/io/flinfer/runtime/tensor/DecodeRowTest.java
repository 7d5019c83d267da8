package io.flinfer.runtime.tensor;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;

/**
 * Every format's fast row decoding gives the plain reference decoding's bits, on random bytes: any
 * scale, any value, any half-precision pattern (subnormals, infinities, NaNs: a NaN where the
 * reference has one, whatever its payload), and rows whose length is not a multiple of the vector
 * width; from heap and from direct (mapped) buffers.
 */
class DecodeRowTest {
  @Property(tries = 200)
  void fastDecodingIsTheReferenceBitForBit(
      @ForAll GgmlType type,
      @ForAll @IntRange(min = 1, max = 3) int rows,
      @ForAll @IntRange(min = 1, max = 3) int blocks,
      @ForAll @IntRange(min = 0, max = 7) int extra,
      @ForAll @LongRange long seed,
      @ForAll boolean mapped,
      @ForAll boolean direct) {
    int cols = type.blockSize() == 1 ? 8 * blocks + extra : type.blockSize() * blocks;
    int bytes = (int) type.bytes((long) rows * cols);
    ByteBuffer data = ByteBuffer.allocate(bytes).order(ByteOrder.LITTLE_ENDIAN);
    new Random(seed).nextBytes(data.array());
    if (direct) {
      // A mapped file is a direct buffer: some decoders copy from it in bulk.
      data = ByteBuffer.allocateDirect(bytes).order(ByteOrder.LITTLE_ENDIAN).put(data).flip();
    }
    // Compact types decode from a heap copy, or from the mapping when the heap has no room.
    WeightMatrix m;
    if (mapped) {
      System.setProperty("flinfer.weights.heap", "false");
    }
    try {
      m = WeightMatrix.of(type, data, rows, cols);
    } finally {
      System.clearProperty("flinfer.weights.heap");
    }
    float[] fast = new float[cols + 3];
    float[] ref = new float[cols + 3];
    for (int r = 0; r < rows; r++) {
      m.decodeRow(r, fast, 3);
      m.decodeRowReference(r, ref, 3);
      for (int i = 3; i < cols + 3; i++) {
        if (Float.isNaN(fast[i]) && Float.isNaN(ref[i])) {
          // A NaN scale or minimum (Q4_1, the K-quants) makes NaN either way; which payload it
          // carries depends on the order the CPU meets NaN operands in, which no model relies on.
          continue;
        }
        assertThat(Float.floatToRawIntBits(fast[i]))
            .as("%s row %d value %d: %s vs %s", type, r, i - 3, fast[i], ref[i])
            .isEqualTo(Float.floatToRawIntBits(ref[i]));
      }
    }
  }
}
