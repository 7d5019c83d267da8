package io.flinfer.avro.history;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinfer.avro.CompletionChunk;
import io.flinfer.avro.PromptLogprobs;
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

  @Test
  void promptLogprobsCrossTheSchemaVersionsBothWays() throws Exception {
    Schema v2 = RecordHistory.CHUNKS.schemas().get(1);
    GenericRecord old = new GenericData.Record(v2);
    old.put("request_id", "r");
    old.put("index", 0);
    old.put("text_delta", "Hi");
    old.put("token_ids", List.of(7));
    old.put("logprobs", List.of(-1f));
    old.put("top_logprobs", List.of());
    ByteBuffer bytes = new BinaryMessageEncoder<GenericRecord>(GenericData.get(), v2).encode(old);
    assertThat(RecordHistory.CHUNKS.decoder().decode(bytes).getPromptLogprobs()).isNull();

    // A consumer on the schema before reads a prompt chunk as an empty one of negative index.
    CompletionChunk now =
        CompletionChunk.newBuilder()
            .setRequestId("r")
            .setIndex(-3)
            .setTextDelta("")
            .setPromptLogprobs(
                PromptLogprobs.newBuilder()
                    .setFirstPosition(1)
                    .setTokenIds(List.of(5, 6))
                    .setLogprobs(List.of(-2f, -0.5f))
                    .build())
            .build();
    BinaryMessageDecoder<GenericRecord> reader = new BinaryMessageDecoder<>(GenericData.get(), v2);
    reader.addSchema(CompletionChunk.getClassSchema());
    GenericRecord seen = reader.decode(now.toByteBuffer());
    assertThat(seen.get("index")).isEqualTo(-3);
    assertThat(seen.get("text_delta").toString()).isEmpty();
    assertThat(seen.hasField("prompt_logprobs")).isFalse();
    CompletionChunk back = RecordHistory.CHUNKS.decoder().decode(now.toByteBuffer());
    assertThat(back.getPromptLogprobs().getTokenIds()).containsExactly(5, 6);
    assertThat(back.getPromptLogprobs().getTopLogprobs()).isEmpty();
  }
}
