package io.flinfer.operators.flink.state;

import java.io.IOException;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.core.memory.DataOutputView;

/**
 * A state serializer whose every value starts with the version of the format it was written in. A
 * release reads every format up to its own, so state written by an older one restores as is (fields
 * added since take their defaults); a value written by a newer release fails with a clear error
 * instead of being misread. Subclasses are stateless, with a public no-argument constructor, and
 * raise {@link #version()} when they change what they write.
 */
public abstract class VersionedSerializer<T> extends TypeSerializer<T> {
  /** The format this release writes. */
  public abstract int version();

  /** Writes {@code value}'s fields in the current format. */
  protected abstract void writeFields(T value, DataOutputView out) throws IOException;

  /** Reads a value written in format {@code version} (1 to {@link #version()}). */
  protected abstract T readFields(int version, DataInputView in) throws IOException;

  @Override
  public final void serialize(T value, DataOutputView out) throws IOException {
    out.writeByte(version());
    writeFields(value, out);
  }

  @Override
  public final T deserialize(DataInputView in) throws IOException {
    int v = in.readUnsignedByte();
    if (v < 1 || v > version()) {
      throw new IOException(
          getClass().getSimpleName()
              + ": state in format "
              + v
              + ", this release reads formats 1 to "
              + version());
    }
    return readFields(v, in);
  }

  @Override
  public final T deserialize(T reuse, DataInputView in) throws IOException {
    return deserialize(in);
  }

  @Override
  public final T copy(T from) {
    try {
      DataOutputSerializer out = new DataOutputSerializer(256);
      serialize(from, out);
      return deserialize(new DataInputDeserializer(out.getSharedBuffer(), 0, out.length()));
    } catch (IOException e) {
      throw new IllegalStateException("copying " + from, e);
    }
  }

  @Override
  public final T copy(T from, T reuse) {
    return copy(from);
  }

  @Override
  public final void copy(DataInputView source, DataOutputView target) throws IOException {
    serialize(deserialize(source), target);
  }

  @Override
  public final boolean isImmutableType() {
    return false;
  }

  @Override
  public final TypeSerializer<T> duplicate() {
    return this;
  }

  @Override
  public final int getLength() {
    return -1;
  }

  @Override
  public final boolean equals(Object o) {
    return o != null && o.getClass() == getClass();
  }

  @Override
  public final int hashCode() {
    return getClass().hashCode();
  }

  @Override
  public final TypeSerializerSnapshot<T> snapshotConfiguration() {
    return new VersionedSerializerSnapshot<>(this);
  }
}
