package io.flinfer.job.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.flinfer.avro.PromptRequest;
import io.flinfer.avro.history.PromptRequests;
import io.flinfer.avro.history.RecordHistory;
import java.nio.ByteBuffer;
import java.util.List;
import org.apache.avro.Schema;
import org.junit.jupiter.api.Test;

/** What a client in another language needs to speak the records, from the command line. */
class SchemasCommandTest {
  @Test
  void theHeaderIsWhatAnEncodedRecordStartsWith() throws Exception {
    JsonNode all = new ObjectMapper().readTree(CommandStdout.of("schemas"));
    assertThat(all).hasSize(4);
    JsonNode prompt = all.get(0);
    assertThat(prompt.get("record").asText()).isEqualTo("PromptRequest");
    ByteBuffer encoded =
        PromptRequest.newBuilder().setRequestId("r").setPrompt("x").build().toByteBuffer();
    StringBuilder start = new StringBuilder();
    for (int i = 0; i < 10; i++) {
      start.append(String.format("%02x", encoded.get(i)));
    }
    assertThat(prompt.get("single_object_header_hex").asText()).isEqualTo(start.toString());
    // Every published schema but the current one.
    assertThat(prompt.get("earlier_fingerprints")).hasSize(PromptRequests.VERSIONS - 1);
    for (RecordHistory<?> h :
        List.of(RecordHistory.COMPLETIONS, RecordHistory.CHUNKS, RecordHistory.DEAD_LETTERS)) {
      String name = h.current().getName();
      assertThat(all)
          .filteredOn(r -> r.get("record").asText().equals(name))
          .singleElement()
          .satisfies(
              r ->
                  assertThat(r.get("earlier_fingerprints"))
                      .as(name)
                      .hasSize(h.schemas().size() - 1));
    }
  }

  @Test
  void theAvscParsesAloneWithItsNamedTypesInlined() {
    Schema parsed =
        new Schema.Parser().parse(CommandStdout.of("schemas", "--avsc", "PromptRequest"));
    assertThat(parsed).isEqualTo(PromptRequest.getClassSchema());
  }
}
