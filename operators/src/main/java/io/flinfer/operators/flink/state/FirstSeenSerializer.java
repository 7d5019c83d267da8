package io.flinfer.operators.flink.state;

import io.flinfer.operators.flink.FirstSeen;
import java.io.IOException;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/** The dedupe state of one request id. Format 1: topic, partition, offset, read time. */
public final class FirstSeenSerializer extends VersionedSerializer<FirstSeen> {
  @Override
  public int version() {
    return 1;
  }

  @Override
  protected void writeFields(FirstSeen f, DataOutputView out) throws IOException {
    out.writeUTF(f.topic());
    out.writeInt(f.partition());
    out.writeLong(f.offset());
    out.writeLong(f.readAtMillis());
  }

  @Override
  protected FirstSeen readFields(int version, DataInputView in) throws IOException {
    return new FirstSeen(in.readUTF(), in.readInt(), in.readLong(), in.readLong());
  }

  @Override
  public FirstSeen createInstance() {
    return null;
  }
}
