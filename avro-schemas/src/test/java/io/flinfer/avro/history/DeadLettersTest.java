package io.flinfer.avro.history;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinfer.avro.DeadLetter;
import java.nio.ByteBuffer;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.message.BinaryMessageDecoder;
import org.apache.avro.message.BinaryMessageEncoder;
import org.junit.jupiter.api.Test;

class DeadLettersTest {
  @Test
  void headersCrossTheSchemaVersionsBothWays() throws Exception {
    Schema v1 = RecordHistory.DEAD_LETTERS.schemas().get(0);
    // A dead letter written before headers were carried reads with none.
    GenericRecord old = new GenericData.Record(v1);
    for (Schema.Field f : v1.getFields()) {
      if (f.hasDefaultValue()) {
        old.put(f.name(), GenericData.get().getDefaultValue(f));
      }
    }
    old.put("raw", ByteBuffer.wrap(new byte[] {1, 2}));
    old.put("stage", "decode");
    old.put("error", "bad bytes");
    ByteBuffer bytes = new BinaryMessageEncoder<GenericRecord>(GenericData.get(), v1).encode(old);
    DeadLetter read = RecordHistory.DEAD_LETTERS.decoder().decode(bytes);
    assertThat(read.getError()).isEqualTo("bad bytes");
    assertThat(read.getHeaders()).isEmpty();

    // A consumer on the schema before reads one with headers, without them.
    DeadLetter now =
        DeadLetter.newBuilder()
            .setRaw(ByteBuffer.wrap(new byte[] {1, 2}))
            .setStage("decode")
            .setError("bad bytes")
            .setHeaders(Map.of("traceparent", "00-abc-def-01"))
            .build();
    BinaryMessageDecoder<GenericRecord> reader = new BinaryMessageDecoder<>(GenericData.get(), v1);
    reader.addSchema(DeadLetter.getClassSchema());
    GenericRecord seen = reader.decode(now.toByteBuffer());
    assertThat(seen.get("error").toString()).isEqualTo("bad bytes");
    assertThat(seen.hasField("headers")).isFalse();
  }
}
