package io.flinfer.job.pipeline;

import io.flinfer.job.kafka.EmbeddedKafka;
import io.flinfer.operators.flink.ModelSource;
import org.apache.kafka.clients.consumer.KafkaConsumer;

/** The pipeline tests' settings, for tests in other packages. */
public final class PipelineTestSupportAccess {
  private PipelineTestSupportAccess() {}

  public static PipelineSettings.Builder settings(String bootstrapServers, ModelSource model) {
    return PipelineTestSupport.settings(bootstrapServers, model, 200);
  }

  /** A read_committed consumer of {@code topics} from their start. */
  public static KafkaConsumer<byte[], byte[]> committedConsumer(
      EmbeddedKafka kafka, String... topics) {
    return PipelineTestSupport.committedConsumer(kafka, topics);
  }
}
