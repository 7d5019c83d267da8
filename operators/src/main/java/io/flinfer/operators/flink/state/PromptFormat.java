package io.flinfer.operators.flink.state;

import io.flinfer.avro.PromptRequest;
import io.flinfer.avro.history.PromptRequests;
import io.flinfer.operators.flink.TokenizedPrompt;
import java.io.IOException;
import java.nio.ByteBuffer;
import org.apache.avro.message.BinaryMessageDecoder;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/**
 * How a {@link TokenizedPrompt} is written inside state. The producer's request is kept in Avro's
 * single-object encoding, whose schema fingerprint lets any later release read it ({@link
 * PromptRequests}).
 *
 * <p>Format 1: request, prompt ids, routing key, seed, topic, partition, offset, read time. Format
 * 2 adds the record's Kafka timestamp.
 */
final class PromptFormat {
  private static final ThreadLocal<BinaryMessageDecoder<PromptRequest>> DECODER =
      ThreadLocal.withInitial(PromptRequests::decoder);

  private PromptFormat() {}

  static void write(TokenizedPrompt p, DataOutputView out) throws IOException {
    ByteBuffer b = p.request.toByteBuffer();
    out.writeInt(b.remaining());
    out.write(b.array(), b.arrayOffset() + b.position(), b.remaining());
    Ints.write(p.promptIds, out);
    out.writeUTF(p.routingKey);
    out.writeLong(p.seed);
    out.writeUTF(p.topic == null ? "" : p.topic);
    out.writeInt(p.partition);
    out.writeLong(p.offset);
    out.writeLong(p.queuedAtMillis);
    out.writeLong(p.recordTimestampMillis);
  }

  static TokenizedPrompt read(int format, DataInputView in) throws IOException {
    TokenizedPrompt p = new TokenizedPrompt();
    byte[] request = new byte[in.readInt()];
    in.readFully(request);
    p.request = PromptRequests.decode(DECODER.get(), request);
    p.promptIds = Ints.read(in);
    p.routingKey = in.readUTF();
    p.seed = in.readLong();
    p.topic = in.readUTF();
    p.partition = in.readInt();
    p.offset = in.readLong();
    p.queuedAtMillis = in.readLong();
    p.recordTimestampMillis = format >= 2 ? in.readLong() : p.queuedAtMillis;
    return p;
  }
}
