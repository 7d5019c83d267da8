package io.flinfer.operators.flink.state;

import java.io.IOException;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.TypeSerializerSchemaCompatibility;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;
import org.apache.flink.util.InstantiationUtil;

/**
 * What a checkpoint records of a {@link VersionedSerializer}: its class and the format it wrote. A
 * serializer of the same class that reads that format takes the state as is.
 */
public final class VersionedSerializerSnapshot<T> implements TypeSerializerSnapshot<T> {
  private String serializerClass;
  private int format;

  /** For Flink, which reads the fields with {@link #readSnapshot}. */
  public VersionedSerializerSnapshot() {}

  VersionedSerializerSnapshot(VersionedSerializer<T> serializer) {
    this.serializerClass = serializer.getClass().getName();
    this.format = serializer.version();
  }

  /** The format the snapshotted serializer wrote. */
  public int format() {
    return format;
  }

  @Override
  public int getCurrentVersion() {
    return 1;
  }

  @Override
  public void writeSnapshot(DataOutputView out) throws IOException {
    out.writeUTF(serializerClass);
    out.writeInt(format);
  }

  @Override
  public void readSnapshot(int readVersion, DataInputView in, ClassLoader classLoader)
      throws IOException {
    serializerClass = in.readUTF();
    format = in.readInt();
  }

  @Override
  @SuppressWarnings("unchecked")
  public TypeSerializer<T> restoreSerializer() {
    try {
      return InstantiationUtil.instantiate(
          (Class<VersionedSerializer<T>>)
              Class.forName(serializerClass, true, Thread.currentThread().getContextClassLoader()));
    } catch (ClassNotFoundException e) {
      throw new IllegalStateException("state serializer " + serializerClass + " is gone", e);
    }
  }

  @Override
  public TypeSerializerSchemaCompatibility<T> resolveSchemaCompatibility(
      TypeSerializerSnapshot<T> oldSnapshot) {
    if (!(oldSnapshot instanceof VersionedSerializerSnapshot<T> old)
        || !old.serializerClass.equals(serializerClass)) {
      return TypeSerializerSchemaCompatibility.incompatible();
    }
    // Every value names its format and this release reads all earlier ones.
    return old.format <= format
        ? TypeSerializerSchemaCompatibility.compatibleAsIs()
        : TypeSerializerSchemaCompatibility.incompatible();
  }
}
