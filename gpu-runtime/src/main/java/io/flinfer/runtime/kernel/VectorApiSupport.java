package io.flinfer.runtime.kernel;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * Whether this JVM's Vector API has what the CPU kernels call. They read mapped weights with {@code
 * FloatVector.fromByteBuffer} and its kin, which JDK 17 and 18 have and JDK 19 replaced (with
 * memory segments): on a later JDK a model would load and then fail in the middle of a forward pass
 * with a {@link NoSuchMethodError}. Loaders check first and refuse with a clear message.
 */
public final class VectorApiSupport {
  private VectorApiSupport() {}

  /** Throws {@link IllegalStateException} where this JVM's Vector API lacks the kernels' calls. */
  public static void require() {
    require(FloatVector.class);
  }

  /** As {@link #require()}, for {@code vectorClass} in place of {@link FloatVector}. */
  static void require(Class<?> vectorClass) {
    try {
      vectorClass.getMethod(
          "fromByteBuffer", VectorSpecies.class, ByteBuffer.class, int.class, ByteOrder.class);
    } catch (NoSuchMethodException e) {
      throw new IllegalStateException(
          "the CPU kernels need JDK 17 or 18: this is Java "
              + Runtime.version().feature()
              + ", whose incubating Vector API no longer reads byte buffers"
              + " (fromByteBuffer, removed in JDK 19)");
    }
  }
}
