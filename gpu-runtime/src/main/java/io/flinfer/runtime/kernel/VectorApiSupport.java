package io.flinfer.runtime.kernel;

import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.ShortVector;

/**
 * Whether this JVM's Vector API has what the CPU kernels call. They read mapped weights through
 * {@link BufferLoads}: {@code fromByteBuffer} on JDK 17 and 18, {@code fromMemorySegment} from JDK
 * 19 on. A Vector API with neither would let a model load and then fail in the middle of a forward
 * pass; loaders check first and refuse with a clear message.
 */
public final class VectorApiSupport {
  private VectorApiSupport() {}

  /** Throws {@link IllegalStateException} where this JVM's Vector API lacks the kernels' calls. */
  public static void require() {
    require(FloatVector.class);
    require(ShortVector.class);
    require(ByteVector.class);
  }

  /** As {@link #require()}, for {@code vectorClass} alone. */
  static void require(Class<?> vectorClass) {
    BufferLoads.unsupported(vectorClass)
        .ifPresent(
            why -> {
              throw new IllegalStateException(
                  "the CPU kernels cannot read mapped weights on Java "
                      + Runtime.version().feature()
                      + ": "
                      + why);
            });
  }
}
