package io.flinfer.operators.flink.state;

import io.flinfer.operators.flink.InFlight;
import java.io.IOException;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/**
 * The inference operator's state of one request: its prompt ({@link PromptFormat}) and the tokens
 * generated so far. Format 1: both; format 2: the prompt's format 2.
 */
public final class InFlightSerializer extends VersionedSerializer<InFlight> {
  @Override
  public int version() {
    return 2;
  }

  @Override
  protected void writeFields(InFlight value, DataOutputView out) throws IOException {
    PromptFormat.write(value.prompt, out);
    Ints.write(value.generated, out);
  }

  @Override
  protected InFlight readFields(int version, DataInputView in) throws IOException {
    return new InFlight(PromptFormat.read(version, in), Ints.read(in));
  }

  @Override
  public InFlight createInstance() {
    return new InFlight();
  }
}
