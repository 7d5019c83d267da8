package io.flinfer.job.pipeline;

import io.flinfer.avro.Completion;
import io.flinfer.avro.CompletionChunk;
import io.flinfer.avro.DeadLetter;
import io.flinfer.operators.flink.Detokenizer;
import io.flinfer.operators.flink.InferenceOperator;
import io.flinfer.operators.flink.PromptDecoder;
import io.flinfer.operators.flink.RawPrompt;
import io.flinfer.operators.flink.TokenOutput;
import io.flinfer.operators.flink.TokenizedPrompt;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.function.Function;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.connector.base.DeliveryGuarantee;
import org.apache.flink.connector.kafka.sink.KafkaRecordSerializationSchema;
import org.apache.flink.connector.kafka.sink.KafkaSink;
import org.apache.flink.connector.kafka.source.KafkaSource;
import org.apache.flink.connector.kafka.source.KafkaSourceBuilder;
import org.apache.flink.connector.kafka.source.enumerator.initializer.OffsetsInitializer;
import org.apache.flink.connector.kafka.source.reader.deserializer.KafkaRecordDeserializationSchema;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.util.Collector;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.OffsetResetStrategy;
import org.apache.kafka.clients.producer.ProducerRecord;

/**
 * The streaming job: prompts from Kafka, decoded and validated (dead letters aside), keyed by
 * routing key into the inference operator, keyed by request id into the detokenizer, and out to the
 * completions topic (exactly once, on checkpoints), the chunks topic and the dead-letter topic (at
 * least once). Operators have stable uids, so savepoints survive upgrades.
 */
public final class FlinferPipeline {
  private FlinferPipeline() {}

  public static void build(StreamExecutionEnvironment env, PipelineSettings s) {
    build(env, s, null);
  }

  /**
   * @param tap applied to every token output of the inference operator, chained into its task
   *     (tests inject faults there); null for none
   */
  public static void build(
      StreamExecutionEnvironment env,
      PipelineSettings s,
      MapFunction<TokenOutput, TokenOutput> tap) {
    env.enableCheckpointing(s.checkpointIntervalMillis());
    // Serving is latency-bound: flush network buffers within milliseconds, not Flink's 100 ms.
    env.setBufferTimeout(2);
    KafkaSourceBuilder<RawPrompt> source =
        KafkaSource.<RawPrompt>builder()
            .setBootstrapServers(s.bootstrapServers())
            .setTopics(s.promptsTopic())
            .setGroupId(s.groupId())
            .setDeserializer(new RawPromptDeserializer());
    if (s.range() == null) {
      // A first start (no checkpoint or savepoint to restore) resumes where the group committed,
      // so a redeployed job does not serve the whole topic again; a new group starts at the
      // beginning.
      source.setStartingOffsets(OffsetsInitializer.committedOffsets(OffsetResetStrategy.EARLIEST));
    } else {
      source
          .setStartingOffsets(s.range().start())
          .setBounded(s.range().stop())
          .setProperty("commit.offsets.on.checkpoint", "false");
    }
    SingleOutputStreamOperator<TokenizedPrompt> prompts =
        env.fromSource(
                source.build(),
                WatermarkStrategy.noWatermarks(),
                s.range() == null ? "Prompts from Kafka" : "Prompts from Kafka " + s.range())
            .uid("prompts-source")
            .process(new PromptDecoder(s.model(), s.maxNewTokensLimit()))
            .name("Decode and validate")
            .uid("decode-validate");
    DataStream<TokenOutput> tokens =
        prompts
            .keyBy(p -> p.routingKey)
            .transform(
                "Inference (continuous batching)",
                TypeInformation.of(TokenOutput.class),
                new InferenceOperator(s.inference()))
            .uid("inference");
    if (tap != null) {
      tokens = tokens.map(tap).name("Tap").uid("tap");
    }
    SingleOutputStreamOperator<Completion> completions =
        tokens
            .keyBy(t -> t.requestId)
            .process(new Detokenizer(s.model(), s.modelId()))
            .name("Detokenize")
            .uid("detokenize");
    completions
        .sinkTo(
            sink(
                s,
                s.completionsTopic(),
                DeliveryGuarantee.EXACTLY_ONCE,
                Completion::getRequestId,
                FlinferPipeline::bytes))
        .name("Completions to Kafka")
        .uid("completions-sink");
    if (s.chunksTopic() != null) {
      completions
          .getSideOutput(Detokenizer.CHUNKS)
          .sinkTo(
              sink(
                  s,
                  s.chunksTopic(),
                  DeliveryGuarantee.AT_LEAST_ONCE,
                  CompletionChunk::getRequestId,
                  FlinferPipeline::bytes))
          .name("Chunks to Kafka")
          .uid("chunks-sink");
    }
    prompts
        .getSideOutput(PromptDecoder.DEAD_LETTERS)
        .sinkTo(
            sink(
                s,
                s.deadLettersTopic(),
                DeliveryGuarantee.AT_LEAST_ONCE,
                d -> d.getRequestId() == null ? "" : d.getRequestId(),
                FlinferPipeline::bytes))
        .name("Dead letters to Kafka")
        .uid("dead-letters-sink");
  }

  private static <T> KafkaSink<T> sink(
      PipelineSettings s,
      String topic,
      DeliveryGuarantee guarantee,
      SerializableFunction<T, String> key,
      SerializableFunction<T, byte[]> value) {
    KafkaRecordSerializationSchema<T> schema =
        (element, context, timestamp) ->
            new ProducerRecord<>(
                topic, key.apply(element).getBytes(StandardCharsets.UTF_8), value.apply(element));
    return KafkaSink.<T>builder()
        .setBootstrapServers(s.bootstrapServers())
        .setRecordSerializer(schema)
        .setDeliveryGuarantee(guarantee)
        // Per group: a replay writing beside the live job never fences the live job's producers.
        .setTransactionalIdPrefix(s.groupId() + "-" + topic)
        .setProperty("transaction.timeout.ms", "600000")
        // Chunks are latency-bound; exactly-once records wait for the checkpoint anyway.
        .setProperty("linger.ms", guarantee == DeliveryGuarantee.EXACTLY_ONCE ? "5" : "2")
        .build();
  }

  /** A function that can travel in the job graph. */
  public interface SerializableFunction<T, R> extends Function<T, R>, java.io.Serializable {}

  private static byte[] bytes(Completion c) {
    return toBytes(() -> c.toByteBuffer());
  }

  private static byte[] bytes(CompletionChunk c) {
    return toBytes(() -> c.toByteBuffer());
  }

  private static byte[] bytes(DeadLetter d) {
    return toBytes(() -> d.toByteBuffer());
  }

  private interface Encoding {
    ByteBuffer encode() throws IOException;
  }

  private static byte[] toBytes(Encoding e) {
    try {
      ByteBuffer b = e.encode();
      byte[] out = new byte[b.remaining()];
      b.get(out);
      return out;
    } catch (IOException x) {
      throw new UncheckedIOException(x);
    }
  }

  /**
   * Keeps every record's bytes and source; decoding happens downstream so bad bytes become dead
   * letters.
   */
  static final class RawPromptDeserializer implements KafkaRecordDeserializationSchema<RawPrompt> {
    @Override
    public void deserialize(ConsumerRecord<byte[], byte[]> record, Collector<RawPrompt> out) {
      out.collect(
          new RawPrompt(record.value(), record.topic(), record.partition(), record.offset()));
    }

    @Override
    public TypeInformation<RawPrompt> getProducedType() {
      return TypeInformation.of(RawPrompt.class);
    }
  }
}
