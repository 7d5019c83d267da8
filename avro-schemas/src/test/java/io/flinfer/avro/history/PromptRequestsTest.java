package io.flinfer.avro.history;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinfer.avro.PromptRequest;
import org.apache.avro.SchemaNormalization;
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
}
