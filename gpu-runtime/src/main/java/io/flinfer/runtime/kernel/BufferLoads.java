package io.flinfer.runtime.kernel;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.nio.Buffer;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Optional;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * Little-endian vector loads from byte buffers (mapped weights), on whichever JDK runs the kernels.
 * JDK 17 and 18 read a buffer directly ({@code fromByteBuffer}); JDK 19 replaced that with {@code
 * fromMemorySegment}, which the project, compiled for JDK 17, reaches through constant method
 * handles. C2 inlines those, and the segment each load wraps around the buffer never leaves the
 * compiled loop, so a load costs what a direct call would.
 *
 * <p>Offsets count from index 0 on JDK 17 and from the buffer's position through a segment; the
 * weights' buffers are slices, whose position stays 0, so the two agree.
 */
final class BufferLoads {
  private static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;

  /** Whether this JDK has {@code fromByteBuffer}; otherwise the method handles below are set. */
  private static final boolean DIRECT = hasByteBufferLoads(FloatVector.class);

  private static final MethodHandle SEGMENT = DIRECT ? null : segmentOfBuffer();
  private static final MethodHandle FLOATS = DIRECT ? null : fromSegment(FloatVector.class);
  private static final MethodHandle SHORTS = DIRECT ? null : fromSegment(ShortVector.class);
  private static final MethodHandle BYTES = DIRECT ? null : fromSegment(ByteVector.class);

  private BufferLoads() {}

  /** {@code s.length()} floats at {@code byteOffset}. */
  static FloatVector floats(VectorSpecies<Float> s, ByteBuffer b, int byteOffset) {
    if (DIRECT) {
      return FloatVector.fromByteBuffer(s, b, byteOffset, LE);
    }
    try {
      return (FloatVector) FLOATS.invokeExact(s, segment(b), (long) byteOffset, LE);
    } catch (Throwable t) {
      throw rethrown(t);
    }
  }

  /** {@code s.length()} 16-bit values at {@code byteOffset}. */
  static ShortVector shorts(VectorSpecies<Short> s, ByteBuffer b, int byteOffset) {
    if (DIRECT) {
      return ShortVector.fromByteBuffer(s, b, byteOffset, LE);
    }
    try {
      return (ShortVector) SHORTS.invokeExact(s, segment(b), (long) byteOffset, LE);
    } catch (Throwable t) {
      throw rethrown(t);
    }
  }

  /** {@code s.length()} bytes at {@code byteOffset}. */
  static ByteVector bytes(VectorSpecies<Byte> s, ByteBuffer b, int byteOffset) {
    if (DIRECT) {
      return ByteVector.fromByteBuffer(s, b, byteOffset, LE);
    }
    try {
      return (ByteVector) BYTES.invokeExact(s, segment(b), (long) byteOffset, LE);
    } catch (Throwable t) {
      throw rethrown(t);
    }
  }

  /**
   * Why this JVM's Vector API cannot load from buffers, if it cannot: neither {@code
   * fromByteBuffer} (JDK 17, 18) nor {@code fromMemorySegment} with {@code java.lang.foreign}.
   */
  static Optional<String> unsupported(Class<?> vectorClass) {
    if (hasByteBufferLoads(vectorClass)
        || (segmentOfBuffer() != null && fromSegment(vectorClass) != null)) {
      return Optional.empty();
    }
    return Optional.of(
        vectorClass.getSimpleName()
            + " has neither fromByteBuffer (JDK 17, 18) nor fromMemorySegment (JDK 19 and later)");
  }

  private static boolean hasByteBufferLoads(Class<?> vectorClass) {
    try {
      vectorClass.getMethod(
          "fromByteBuffer", VectorSpecies.class, ByteBuffer.class, int.class, ByteOrder.class);
      return true;
    } catch (NoSuchMethodException e) {
      return false;
    }
  }

  private static Object segment(ByteBuffer b) throws Throwable {
    return (Object) SEGMENT.invokeExact(b);
  }

  private static MethodHandle segmentOfBuffer() {
    try {
      Class<?> segment = Class.forName("java.lang.foreign.MemorySegment");
      return MethodHandles.publicLookup()
          .findStatic(segment, "ofBuffer", MethodType.methodType(segment, Buffer.class))
          .asType(MethodType.methodType(Object.class, ByteBuffer.class));
    } catch (ReflectiveOperationException e) {
      return null; // unsupported() says why, and VectorApiSupport refuses before any kernel runs
    }
  }

  private static MethodHandle fromSegment(Class<?> vectorClass) {
    try {
      Class<?> segment = Class.forName("java.lang.foreign.MemorySegment");
      return MethodHandles.publicLookup()
          .findStatic(
              vectorClass,
              "fromMemorySegment",
              MethodType.methodType(
                  vectorClass, VectorSpecies.class, segment, long.class, ByteOrder.class))
          .asType(
              MethodType.methodType(
                  vectorClass, VectorSpecies.class, Object.class, long.class, ByteOrder.class));
    } catch (ReflectiveOperationException e) {
      return null;
    }
  }

  private static RuntimeException rethrown(Throwable t) {
    if (t instanceof RuntimeException r) {
      throw r;
    }
    if (t instanceof Error e) {
      throw e;
    }
    throw new IllegalStateException(t);
  }
}
