package io.flinfer.avro.history;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinfer.avro.Completion;
import io.flinfer.avro.Provenance;
import io.flinfer.avro.Timings;
import io.flinfer.avro.ToolCall;
import io.flinfer.avro.Usage;
import java.nio.ByteBuffer;
import java.util.List;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.message.BinaryMessageDecoder;
import org.apache.avro.message.BinaryMessageEncoder;
import org.junit.jupiter.api.Test;

class CompletionsTest {
  private static Completion completion(List<ToolCall> calls) {
    return Completion.newBuilder()
        .setRequestId("r")
        .setText("t")
        .setFinishReason("stop")
        .setUsage(new Usage(1, 0, 1, 0))
        .setTimings(Timings.newBuilder().build())
        .setProvenance(Provenance.newBuilder().build())
        .setToolCalls(calls)
        .build();
  }

  @Test
  void completionsCrossTheSchemaVersionsBothWays() throws Exception {
    Schema v1 = RecordHistory.COMPLETIONS.schemas().get(0);
    // A completion written before tool calls reads with none.
    GenericRecord old = new GenericData.Record(v1);
    Completion now = completion(List.of(new ToolCall("call_1", "add", "{}")));
    for (Schema.Field f : v1.getFields()) {
      old.put(f.name(), GenericData.get().deepCopy(f.schema(), toGeneric(now, f.name())));
    }
    ByteBuffer bytes = new BinaryMessageEncoder<GenericRecord>(GenericData.get(), v1).encode(old);
    Completion read = RecordHistory.COMPLETIONS.decoder().decode(bytes);
    assertThat(read.getText()).isEqualTo("t");
    assertThat(read.getToolCalls()).isEmpty();

    // A consumer on the schema before reads a completion with calls, without them.
    BinaryMessageDecoder<GenericRecord> reader = new BinaryMessageDecoder<>(GenericData.get(), v1);
    reader.addSchema(Completion.getClassSchema());
    GenericRecord seen = reader.decode(now.toByteBuffer());
    assertThat(seen.get("text").toString()).isEqualTo("t");
    assertThat(seen.hasField("tool_calls")).isFalse();
  }

  @Test
  void reasoningCrossesTheSchemaVersionsBothWays() throws Exception {
    Schema v2 = RecordHistory.COMPLETIONS.schemas().get(1);
    Completion now = Completion.newBuilder(completion(List.of())).setReasoningContent("hm").build();
    GenericRecord old = new GenericData.Record(v2);
    for (Schema.Field f : v2.getFields()) {
      old.put(f.name(), GenericData.get().deepCopy(f.schema(), toGeneric(now, f.name())));
    }
    ByteBuffer bytes = new BinaryMessageEncoder<GenericRecord>(GenericData.get(), v2).encode(old);
    assertThat(RecordHistory.COMPLETIONS.decoder().decode(bytes).getReasoningContent()).isNull();

    BinaryMessageDecoder<GenericRecord> reader = new BinaryMessageDecoder<>(GenericData.get(), v2);
    reader.addSchema(Completion.getClassSchema());
    GenericRecord seen = reader.decode(now.toByteBuffer());
    assertThat(seen.get("text").toString()).isEqualTo("t");
    assertThat(seen.hasField("reasoning_content")).isFalse();
  }

  /** A field of {@code c} as a generic record's value. */
  private static Object toGeneric(Completion c, String field) throws Exception {
    GenericRecord g =
        new BinaryMessageDecoder<GenericRecord>(GenericData.get(), Completion.getClassSchema())
            .decode(c.toByteBuffer());
    return g.get(field);
  }
}
