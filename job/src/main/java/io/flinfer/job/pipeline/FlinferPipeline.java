package io.flinfer.job.pipeline;

import io.flinfer.avro.Completion;
import io.flinfer.avro.CompletionChunk;
import io.flinfer.avro.DeadLetter;
import io.flinfer.operators.flink.CarriedHeaders;
import io.flinfer.operators.flink.Detokenizer;
import io.flinfer.operators.flink.InferenceOperator;
import io.flinfer.operators.flink.PromptDecoder;
import io.flinfer.operators.flink.RawPrompt;
import io.flinfer.operators.flink.RequestDedupe;
import io.flinfer.operators.flink.TokenOutput;
import io.flinfer.operators.flink.TokenizedPrompt;
import io.flinfer.operators.format.OutputFormat;
import io.flinfer.operators.request.Rejection;
import io.flinfer.operators.request.Utf8;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
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
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;

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
            .setDeserializer(
                new RawPromptDeserializer(s.limits().deadLetterEchoBytes(), s.carriedHeaders()));
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
    SingleOutputStreamOperator<TokenizedPrompt> decoded =
        env.fromSource(
                source.build(),
                WatermarkStrategy.noWatermarks(),
                s.range() == null ? "Prompts from Kafka" : "Prompts from Kafka " + s.range())
            .uid("prompts-source")
            .process(new PromptDecoder(s.model(), s.limits(), s.schemaRegistryUrl()))
            .name("Decode and validate")
            .uid("decode-validate");
    SingleOutputStreamOperator<TokenizedPrompt> prompts =
        decoded
            .keyBy(p -> p.request.getRequestId())
            .process(new RequestDedupe(s.dedupeWindow(), s.limits(), s.carriedHeaders()))
            .name("Answer each request id once")
            .uid("dedupe");
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
            .process(new Detokenizer(s.model(), s.modelId(), s.limits(), s.carriedHeaders()))
            .name("Detokenize")
            .uid("detokenize");
    RecordSizes sizes = new RecordSizes(s.limits());
    CarriedHeaders carried = s.carriedHeaders();
    // Lambdas, not Writer::write: serialized method references to one method with different
    // argument types deserialize as the first one, whose cast fails on the others' records.
    OutputFormat.Writer completionsOut = writer(s, s.completionsTopic());
    OutputFormat.Writer deadLettersOut = writer(s, s.deadLettersTopic());
    completionsOut.registerUpFront(Completion.getClassSchema());
    deadLettersOut.registerUpFront(DeadLetter.getClassSchema());
    completions
        .sinkTo(
            sink(
                s,
                s.completionsTopic(),
                DeliveryGuarantee.EXACTLY_ONCE,
                Completion::getRequestId,
                c -> completionsOut.write(c),
                c -> carried.of(c.getMetadata()),
                sizes::completionTooLarge))
        .name("Completions to Kafka")
        .uid("completions-sink");
    if (s.chunksTopic() != null) {
      OutputFormat.Writer chunksOut = writer(s, s.chunksTopic());
      chunksOut.registerUpFront(CompletionChunk.getClassSchema());
      completions
          .getSideOutput(Detokenizer.CHUNKS)
          .sinkTo(
              sink(
                  s,
                  s.chunksTopic(),
                  DeliveryGuarantee.AT_LEAST_ONCE,
                  CompletionChunk::getRequestId,
                  c -> chunksOut.write(c),
                  CompletionChunk::getHeaders,
                  sizes::chunkTooLarge))
          .name("Chunks to Kafka")
          .uid("chunks-sink");
    }
    decoded
        .getSideOutput(PromptDecoder.DEAD_LETTERS)
        .union(prompts.getSideOutput(RequestDedupe.DEAD_LETTERS))
        .sinkTo(
            sink(
                s,
                s.deadLettersTopic(),
                DeliveryGuarantee.AT_LEAST_ONCE,
                d -> d.getRequestId() == null ? "" : d.getRequestId(),
                d -> deadLettersOut.write(d),
                DeadLetter::getHeaders,
                sizes::deadLetterTooLarge))
        .name("Dead letters to Kafka")
        .uid("dead-letters-sink");
  }

  /**
   * A sink to {@code topic}, each record with its {@code headers}. A record larger than the job may
   * send (which the request limits rule out, but the check is cheap) is never sent: {@code
   * tooLarge} turns it into a dead letter on the dead-letter topic, with the same headers, in the
   * same transaction, so one record never fails the job.
   */
  private static <T> KafkaSink<T> sink(
      PipelineSettings s,
      String topic,
      DeliveryGuarantee guarantee,
      SerializableFunction<T, String> key,
      SerializableFunction<T, byte[]> value,
      SerializableFunction<T, Map<String, String>> headers,
      RecordSizes.Oversize<T> tooLarge) {
    int max = s.limits().maxRecordBytes();
    String deadLetters = s.deadLettersTopic();
    OutputFormat.Writer deadLettersOut = writer(s, deadLetters);
    KafkaRecordSerializationSchema<T> schema =
        (element, context, timestamp) -> {
          byte[] k = key.apply(element).getBytes(StandardCharsets.UTF_8);
          byte[] v = value.apply(element);
          Map<String, String> h = headers.apply(element);
          long size = k.length + v.length + headerBytes(h);
          if (size <= max) {
            return new ProducerRecord<>(topic, null, k, v, kafkaHeaders(h));
          }
          DeadLetter d = tooLarge.deadLetter(element, v, (int) Math.min(size, Integer.MAX_VALUE));
          d.setHeaders(h);
          String id = d.getRequestId() == null ? "" : d.getRequestId();
          return new ProducerRecord<>(
              deadLetters,
              null,
              id.getBytes(StandardCharsets.UTF_8),
              deadLettersOut.write(d),
              kafkaHeaders(h));
        };
    return KafkaSink.<T>builder()
        .setBootstrapServers(s.bootstrapServers())
        .setRecordSerializer(schema)
        .setDeliveryGuarantee(guarantee)
        // Per group: a replay writing beside the live job never fences the live job's producers.
        .setTransactionalIdPrefix(s.groupId() + "-" + topic)
        .setProperty("transaction.timeout.ms", "600000")
        .setProperty("max.request.size", String.valueOf(max + 1024))
        // Chunks are latency-bound; exactly-once records wait for the checkpoint anyway.
        .setProperty("linger.ms", guarantee == DeliveryGuarantee.EXACTLY_ONCE ? "5" : "2")
        .build();
  }

  private static long headerBytes(Map<String, String> headers) {
    long n = 0;
    for (Map.Entry<String, String> e : headers.entrySet()) {
      n += Utf8.length(e.getKey()) + Utf8.length(e.getValue());
    }
    return n;
  }

  private static List<Header> kafkaHeaders(Map<String, String> headers) {
    if (headers.isEmpty()) {
      return List.of(); // requests without carried headers
    }
    List<Header> out = new ArrayList<>(headers.size());
    headers.forEach((n, v) -> out.add(new RecordHeader(n, v.getBytes(StandardCharsets.UTF_8))));
    return out;
  }

  private static OutputFormat.Writer writer(PipelineSettings s, String topic) {
    return new OutputFormat.Writer(s.outputFormat(), s.schemaRegistryUrl(), topic);
  }

  /** A function that can travel in the job graph. */
  public interface SerializableFunction<T, R> extends Function<T, R>, java.io.Serializable {}

  /**
   * Keeps every record's bytes and source; decoding happens downstream so bad bytes become dead
   * letters.
   */
  static final class RawPromptDeserializer implements KafkaRecordDeserializationSchema<RawPrompt> {
    private final int keyEchoBytes;
    private final CarriedHeaders carried;

    RawPromptDeserializer(int keyEchoBytes, CarriedHeaders carried) {
      this.keyEchoBytes = keyEchoBytes;
      this.carried = carried;
    }

    @Override
    public void deserialize(ConsumerRecord<byte[], byte[]> record, Collector<RawPrompt> out) {
      RawPrompt raw =
          new RawPrompt(record.value(), record.topic(), record.partition(), record.offset());
      byte[] key = record.key();
      // Only a dead letter reads the key, and it echoes this much of it.
      raw.key = key == null || key.length <= keyEchoBytes ? key : Arrays.copyOf(key, keyEchoBytes);
      raw.timestampMillis = record.timestamp();
      carry(record, raw);
      out.collect(raw);
    }

    /**
     * The carried headers into {@code raw}: as text, and at most as many bytes as a dead letter
     * echoes, so that every record about the request stays bounded; else the problem, which the
     * decoder turns into a dead letter carrying none of them.
     */
    private void carry(ConsumerRecord<byte[], byte[]> record, RawPrompt raw) {
      if (carried.names().isEmpty()) {
        return;
      }
      Map<String, String> found = new LinkedHashMap<>();
      int bytes = 0;
      for (String name : carried.names()) {
        Header h = record.headers().lastHeader(name);
        if (h == null) {
          continue;
        }
        byte[] v = h.value() == null ? new byte[0] : h.value();
        try {
          found.put(
              name, StandardCharsets.UTF_8.newDecoder().decode(ByteBuffer.wrap(v)).toString());
        } catch (CharacterCodingException e) {
          raw.headerProblem = "header " + name + " is not UTF-8 text";
          raw.headerRejection = Rejection.INVALID_REQUEST;
          return;
        }
        bytes += name.getBytes(StandardCharsets.UTF_8).length + v.length;
      }
      if (bytes > keyEchoBytes) {
        raw.headerProblem =
            "the carried headers are "
                + bytes
                + " bytes; the limit is "
                + keyEchoBytes
                + " (the dead-letter echo bytes)";
        raw.headerRejection = Rejection.LIMIT_EXCEEDED;
      } else if (!found.isEmpty()) {
        raw.headers = found;
      }
    }

    @Override
    public TypeInformation<RawPrompt> getProducedType() {
      return TypeInformation.of(RawPrompt.class);
    }
  }
}
