package io.flinfer.avro.history;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.apache.avro.SchemaNormalization;
import org.junit.jupiter.api.Test;

class RecordHistoryTest {
  /** Publishing a new schema of a record the job writes means adding it to history/. */
  @Test
  void eachCurrentSchemaIsTheNewestPublishedOne() {
    for (RecordHistory<?> h :
        List.of(RecordHistory.COMPLETIONS, RecordHistory.CHUNKS, RecordHistory.DEAD_LETTERS)) {
      var schemas = h.schemas();
      String name = h.current().getName();
      assertThat(SchemaNormalization.parsingFingerprint64(schemas.get(schemas.size() - 1)))
          .as("add the current %s schema to history/ and count it in RecordHistory", name)
          .isEqualTo(SchemaNormalization.parsingFingerprint64(h.current()));
      assertThat(schemas.stream().map(SchemaNormalization::parsingFingerprint64).distinct())
          .as("%s's published schemas differ", name)
          .hasSize(schemas.size());
    }
  }
}
