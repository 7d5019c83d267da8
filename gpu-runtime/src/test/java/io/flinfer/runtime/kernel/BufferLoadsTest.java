package io.flinfer.runtime.kernel;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.ShortVector;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

/**
 * Each load gives the little-endian values a scalar read gives, from mapped-like (direct) and heap
 * buffers, at any offset: on JDK 17 through {@code fromByteBuffer}, on JDK 19 and later through
 * memory segments (CI runs this class on both).
 */
class BufferLoadsTest {
  private static final int SIZE = 512;

  @Property(tries = 200)
  void loadsReadWhatScalarReadsRead(
      @ForAll @IntRange(min = 0, max = SIZE - 32) int offset, @ForAll boolean direct) {
    ByteBuffer b = filled(direct);
    float[] floats = BufferLoads.floats(FloatVector.SPECIES_256, b, offset).toArray();
    for (int i = 0; i < floats.length; i++) {
      assertThat(Float.floatToRawIntBits(floats[i]))
          .isEqualTo(Float.floatToRawIntBits(b.getFloat(offset + 4 * i)));
    }
    short[] shorts = BufferLoads.shorts(ShortVector.SPECIES_128, b, offset).toArray();
    for (int i = 0; i < shorts.length; i++) {
      assertThat(shorts[i]).isEqualTo(b.getShort(offset + 2 * i));
    }
    byte[] bytes = BufferLoads.bytes(ByteVector.SPECIES_256, b, offset).toArray();
    for (int i = 0; i < bytes.length; i++) {
      assertThat(bytes[i]).isEqualTo(b.get(offset + i));
    }
  }

  @Property(tries = 20)
  void aLoadPastTheEndIsRefused(@ForAll @IntRange(min = SIZE - 31, max = SIZE) int offset) {
    ByteBuffer b = filled(true);
    assertThatThrownBy(() -> BufferLoads.floats(FloatVector.SPECIES_256, b, offset))
        .isInstanceOf(IndexOutOfBoundsException.class);
    assertThatThrownBy(() -> BufferLoads.bytes(ByteVector.SPECIES_256, b, offset))
        .isInstanceOf(IndexOutOfBoundsException.class);
  }

  private static ByteBuffer filled(boolean direct) {
    ByteBuffer b =
        (direct ? ByteBuffer.allocateDirect(SIZE) : ByteBuffer.allocate(SIZE))
            .order(ByteOrder.LITTLE_ENDIAN);
    for (int i = 0; i < SIZE; i++) {
      b.put(i, (byte) (i * 37 + 11));
    }
    return b;
  }
}
