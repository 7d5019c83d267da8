package io.flinfer.operators.sql;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinfer.avro.PromptRequest;
import io.flinfer.avro.SamplingOptions;
import io.flinfer.operators.engine.EngineConfig;
import io.flinfer.operators.flink.ModelSource;
import io.flinfer.operators.predict.PredictionEngine;
import io.flinfer.operators.request.RequestLimits;
import io.flinfer.runtime.testing.SharedFiles;
import java.nio.file.Path;
import java.util.List;
import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.catalog.Column;
import org.apache.flink.table.catalog.ResolvedSchema;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.junit.jupiter.api.Test;

/** The synchronous and the asynchronous predict function answer a row alike, and map columns. */
class FlinferPredictFunctionsTest {
  private static FlinferPredictFunctions.Lease lease() {
    Path dir = SharedFiles.stories260kDir();
    PredictionEngine.Key key =
        new PredictionEngine.Key(
            new ModelSource(
                dir.resolve("stories260K.bin").toString(), dir.resolve("tok512.bin").toString()),
            EngineConfig.builder().maxTotalTokens(2048).threads(1).build(),
            "cpu",
            RequestLimits.defaults());
    return new FlinferPredictFunctions.Lease(
        key,
        PromptColumn.of(
            ResolvedSchema.of(Column.physical("prompt", DataTypes.STRING())),
            PromptRequest.newBuilder()
                .setRequestId("row")
                .setMaxNewTokens(12)
                .setSampling(SamplingOptions.newBuilder().setTemperature(0f).build())
                .build()),
        PredictionColumns.of(
            ResolvedSchema.of(
                Column.physical("completion_tokens", DataTypes.INT()),
                Column.physical("text", DataTypes.STRING()),
                Column.physical("error", DataTypes.STRING()))));
  }

  @Test
  void syncAndAsyncGiveTheSameRow() throws Exception {
    RowData prompt = GenericRowData.of(StringData.fromString("Once upon a time"));
    FlinferPredictFunctions.Sync sync = new FlinferPredictFunctions.Sync(lease());
    FlinferPredictFunctions.Async async = new FlinferPredictFunctions.Async(lease());
    sync.open(null);
    async.open(null);
    try {
      RowData s = List.copyOf(sync.predict(prompt)).get(0);
      RowData a = List.copyOf(async.asyncPredict(prompt).get()).get(0);
      assertThat(s.getInt(0)).isBetween(1, 12);
      assertThat(s.getString(1).toString()).isNotEmpty();
      assertThat(s.isNullAt(2)).isTrue();
      assertThat(a.getInt(0)).isEqualTo(s.getInt(0));
      assertThat(a.getString(1)).isEqualTo(s.getString(1));
      // A null prompt: no text, the reason in the error column.
      RowData bad = List.copyOf(sync.predict(GenericRowData.of((Object) null))).get(0);
      assertThat(bad.isNullAt(1)).isTrue();
      assertThat(bad.getString(2).toString()).isNotBlank();
    } finally {
      sync.close();
      async.close();
    }
  }
}
