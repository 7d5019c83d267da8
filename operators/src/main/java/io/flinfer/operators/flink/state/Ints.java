package io.flinfer.operators.flink.state;

import java.io.IOException;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/** Length-prefixed primitive arrays in state. */
final class Ints {
  private Ints() {}

  static void write(int[] values, DataOutputView out) throws IOException {
    out.writeInt(values.length);
    for (int v : values) {
      out.writeInt(v);
    }
  }

  static int[] read(DataInputView in) throws IOException {
    int[] values = new int[in.readInt()];
    for (int i = 0; i < values.length; i++) {
      values[i] = in.readInt();
    }
    return values;
  }

  static void writeFloats(float[] values, DataOutputView out) throws IOException {
    out.writeInt(values.length);
    for (float v : values) {
      out.writeFloat(v);
    }
  }

  static float[] readFloats(DataInputView in) throws IOException {
    float[] values = new float[in.readInt()];
    for (int i = 0; i < values.length; i++) {
      values[i] = in.readFloat();
    }
    return values;
  }
}
