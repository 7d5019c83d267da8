package io.flinfer.avro.history;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinfer.avro.CompletionChunk;
import java.nio.ByteBuffer;
import java.util.List;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.message.BinaryMessageDecoder;
import org.apache.avro.message.BinaryMessageEncoder;
import org.junit.jupiter.api.Test;

class CompletionChunksTest {
  @Test
  void reasoningDeltasCrossTheSchemaVersionsBothWays() throws Exception {
    Schema v1 = RecordHistory.CHUNKS.schemas().get(0);
    // A chunk written before the split reads without one.
    GenericRecord old = new GenericData.Record(v1);
    old.put("request_id", "r");
    old.put("index", 3);
    old.put("text_delta", "<think>Hm");
    old.put("token_ids", List.of(7, 8));
    old.put("logprobs", List.of(-1f, -2f));
    old.put("top_logprobs", List.of());
    ByteBuffer bytes = new BinaryMessageEncoder<GenericRecord>(GenericData.get(), v1).encode(old);
    CompletionChunk read = RecordHistory.CHUNKS.decoder().decode(bytes);
    assertThat(read.getTextDelta()).isEqualTo("<think>Hm");
    assertThat(read.getTokenIds()).containsExactly(7, 8);
    assertThat(read.getReasoningDelta()).isNull();
    assertThat(read.getContentDelta()).isNull();

    // A consumer on the schema before reads a chunk with the split, without it.
    CompletionChunk now =
        CompletionChunk.newBuilder()
            .setRequestId("r")
            .setIndex(3)
            .setTextDelta("<think>Hm")
            .setReasoningDelta("Hm")
            .setContentDelta("")
            .build();
    BinaryMessageDecoder<GenericRecord> reader = new BinaryMessageDecoder<>(GenericData.get(), v1);
    reader.addSchema(CompletionChunk.getClassSchema());
    GenericRecord seen = reader.decode(now.toByteBuffer());
    assertThat(seen.get("text_delta").toString()).isEqualTo("<think>Hm");
    assertThat(seen.hasField("reasoning_delta")).isFalse();
  }
}
