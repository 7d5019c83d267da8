package io.flinfer.avro.history;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinfer.avro.ChatMessage;
import io.flinfer.avro.PromptRequest;
import java.nio.ByteBuffer;
import java.util.List;
import org.apache.avro.Schema;
import org.apache.avro.SchemaNormalization;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.message.BinaryMessageDecoder;
import org.apache.avro.message.BinaryMessageEncoder;
import org.junit.jupiter.api.Test;

class PromptRequestsTest {
  @Test
  void theCurrentSchemaIsTheNewestPublishedOne() {
    long current = SchemaNormalization.parsingFingerprint64(PromptRequest.getClassSchema());
    var history = PromptRequests.history();
    assertThat(SchemaNormalization.parsingFingerprint64(history.get(history.size() - 1)))
        .as("add the current PromptRequest schema to history/ and raise VERSIONS")
        .isEqualTo(current);
  }

  @Test
  void everyPublishedSchemaIsDistinct() {
    assertThat(
            PromptRequests.history().stream()
                .map(SchemaNormalization::parsingFingerprint64)
                .distinct()
                .count())
        .isEqualTo(PromptRequests.VERSIONS);
  }

  @Test
  void conversationsCrossTheSchemaVersionsBothWays() throws Exception {
    Schema v2 = PromptRequests.history().get(1);
    // A producer on the schema before messages: its record reads with no messages.
    GenericRecord old = new GenericData.Record(v2);
    for (Schema.Field f : v2.getFields()) {
      old.put(
          f.name(),
          GenericData.get()
              .deepCopy(
                  f.schema(),
                  f.defaultVal() == null ? null : new GenericData().getDefaultValue(f)));
    }
    old.put("request_id", "old");
    old.put("prompt", "Hi");
    ByteBuffer bytes = new BinaryMessageEncoder<GenericRecord>(GenericData.get(), v2).encode(old);
    PromptRequest read = PromptRequests.decoder().decode(bytes);
    assertThat(read.getRequestId()).isEqualTo("old");
    assertThat(read.getMessages()).isNull();

    // A consumer on the schema before messages reads a conversation's other fields.
    PromptRequest now =
        PromptRequest.newBuilder()
            .setRequestId("chat")
            .setMessages(List.of(new ChatMessage("user", "Hi")))
            .build();
    BinaryMessageDecoder<GenericRecord> oldReader =
        new BinaryMessageDecoder<>(GenericData.get(), v2);
    oldReader.addSchema(PromptRequest.getClassSchema());
    GenericRecord seen = oldReader.decode(now.toByteBuffer());
    assertThat(seen.get("request_id").toString()).isEqualTo("chat");
    assertThat(seen.hasField("messages")).isFalse();
  }

  @Test
  void topLogprobsCrossTheSchemaVersionsBothWays() throws Exception {
    Schema v3 = PromptRequests.history().get(2);
    GenericRecord old = new GenericData.Record(v3);
    for (Schema.Field f : v3.getFields()) {
      old.put(
          f.name(),
          GenericData.get()
              .deepCopy(
                  f.schema(),
                  f.defaultVal() == null ? null : new GenericData().getDefaultValue(f)));
    }
    old.put("request_id", "old");
    old.put("prompt", "Hi");
    ByteBuffer bytes = new BinaryMessageEncoder<GenericRecord>(GenericData.get(), v3).encode(old);
    PromptRequest read = PromptRequests.decoder().decode(bytes);
    assertThat(read.getRequestId()).isEqualTo("old");
    assertThat(read.getTopLogprobs()).isZero();

    PromptRequest now =
        PromptRequest.newBuilder().setRequestId("alts").setPrompt("Hi").setTopLogprobs(5).build();
    BinaryMessageDecoder<GenericRecord> oldReader =
        new BinaryMessageDecoder<>(GenericData.get(), v3);
    oldReader.addSchema(PromptRequest.getClassSchema());
    GenericRecord seen = oldReader.decode(now.toByteBuffer());
    assertThat(seen.get("prompt").toString()).isEqualTo("Hi");
    assertThat(seen.hasField("top_logprobs")).isFalse();
  }
}
