package io.flinfer.operators.flink.state;

import io.flinfer.operators.flink.Detokenizer;
import java.io.IOException;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/**
 * The detokenizer's state of one request. Format 1: prompt, tokens, first-token time, cached
 * tokens, log-probabilities not yet sent; format 2 adds the queue time and the engine's time to
 * first token (and the prompt's format 2); format 3 the unsent tokens' alternatives (top_logprobs).
 */
public final class ProgressSerializer extends VersionedSerializer<Detokenizer.Progress> {
  @Override
  public int version() {
    return 3;
  }

  @Override
  protected void writeFields(Detokenizer.Progress p, DataOutputView out) throws IOException {
    out.writeBoolean(p.prompt != null);
    if (p.prompt != null) {
      PromptFormat.write(p.prompt, out);
    }
    Ints.write(p.tokens, out);
    out.writeLong(p.firstTokenMillis);
    out.writeInt(p.cachedTokens);
    Ints.writeFloats(p.unsentLogprobs, out);
    out.writeLong(p.queuedMillis);
    out.writeLong(p.engineFirstTokenMillis);
    Ints.write(p.unsentTopIds, out);
    Ints.writeFloats(p.unsentTopLogprobs, out);
  }

  @Override
  protected Detokenizer.Progress readFields(int version, DataInputView in) throws IOException {
    Detokenizer.Progress p = new Detokenizer.Progress();
    p.prompt = in.readBoolean() ? PromptFormat.read(version, in) : null;
    p.tokens = Ints.read(in);
    p.firstTokenMillis = in.readLong();
    p.cachedTokens = in.readInt();
    p.unsentLogprobs = Ints.readFloats(in);
    if (version >= 2) {
      p.queuedMillis = in.readLong();
      p.engineFirstTokenMillis = in.readLong();
    }
    if (version >= 3) {
      p.unsentTopIds = Ints.read(in);
      p.unsentTopLogprobs = Ints.readFloats(in);
    }
    return p;
  }

  @Override
  public Detokenizer.Progress createInstance() {
    return new Detokenizer.Progress();
  }
}
