package io.flinfer.job.format;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flinfer.avro.Completion;
import io.flinfer.avro.DeadLetter;
import io.flinfer.avro.PromptRequest;
import io.flinfer.avro.SamplingOptions;
import io.flinfer.avro.history.PromptRequests;
import io.flinfer.job.kafka.EmbeddedKafka;
import io.flinfer.job.pipeline.FlinferPipeline;
import io.flinfer.job.pipeline.PipelineSettings;
import io.flinfer.operators.flink.ModelSource;
import io.flinfer.operators.format.OutputFormat;
import io.flinfer.operators.format.RecordReader;
import io.flinfer.operators.format.SchemaRegistryClient;
import io.flinfer.runtime.testing.SharedFiles;
import java.lang.reflect.InvocationTargetException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.SchemaBuilder;
import org.apache.avro.SchemaNormalization;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.message.BinaryMessageEncoder;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Any Kafka client can talk to the job: prompts in Confluent's wire format (written by Flink's
 * Confluent schema over Confluent's registry client), JSON and Avro single-object, each in today's
 * schema, the first published one and one from the future, are served side by side; with {@code
 * --output-format confluent} the completions read back through Confluent's client.
 */
class ConfluentFormatsITCase {
  @TempDir Path dir;

  private static GenericRecord generic(PromptRequest r, Schema schema) {
    // Today's record as a generic one of another schema version, field by field by name.
    GenericRecord g = new GenericData.Record(schema);
    for (Schema.Field f : schema.getFields()) {
      Schema.Field now = PromptRequest.getClassSchema().getField(f.name());
      Object v = now == null ? GenericData.get().getDefaultValue(f) : r.get(now.pos());
      if (v instanceof SamplingOptions s) {
        GenericRecord gs = new GenericData.Record(f.schema());
        for (Schema.Field sf : f.schema().getFields()) {
          Schema.Field sn = SamplingOptions.getClassSchema().getField(sf.name());
          gs.put(sf.name(), sn == null ? GenericData.get().getDefaultValue(sf) : s.get(sn.pos()));
        }
        v = gs;
      }
      g.put(f.name(), v);
    }
    return g;
  }

  /** Today's PromptRequest schema with one more optional field, as a later release may have. */
  private static Schema future() {
    Schema now = PromptRequest.getClassSchema();
    List<Schema.Field> fields = new ArrayList<>();
    for (Schema.Field f : now.getFields()) {
      fields.add(new Schema.Field(f, f.schema()));
    }
    fields.add(
        new Schema.Field(
            "priority",
            SchemaBuilder.builder().unionOf().nullType().and().intType().endUnion(),
            "from a later release",
            Schema.Field.NULL_DEFAULT_VALUE));
    return Schema.createRecord(now.getName(), now.getDoc(), now.getNamespace(), false, fields);
  }

  private static PromptRequest request(String id) {
    return PromptRequest.newBuilder()
        .setRequestId(id)
        .setPrompt("Once upon a time")
        .setSampling(SamplingOptions.newBuilder().setTemperature(0f).build())
        .setMaxNewTokens(8)
        .build();
  }

  @Test
  @Timeout(180)
  void everyFormatIsServedAndConfluentReadsTheAnswers() throws Exception {
    try (LoopbackSchemaRegistry registry = new LoopbackSchemaRegistry();
        ConfluentSerdes confluent = new ConfluentSerdes(registry.url());
        EmbeddedKafka kafka = EmbeddedKafka.start(dir.resolve("kafka"))) {
      kafka.createTopics(1, "prompts", "completions", "chunks", "dead-letters");
      Schema v1 = PromptRequests.history().get(0);
      Map<String, byte[]> records = new HashMap<>();
      records.put("confluent-now", confluent.serialize(request("confluent-now"), "prompts-value"));
      records.put(
          "confluent-v1",
          confluent.serialize(generic(request("confluent-v1"), v1), "prompts-v1-value"));
      records.put(
          "confluent-future",
          confluent.serialize(
              generic(request("confluent-future"), future()), "prompts-future-value"));
      records.put(
          "json-now",
          ("{\"request_id\": \"json-now\", \"prompt\": \"Once upon a time\","
                  + " \"max_new_tokens\": 8, \"sampling\": {\"temperature\": 0}}")
              .getBytes(StandardCharsets.UTF_8));
      records.put(
          "json-v1",
          "{\"request_id\": \"json-v1\", \"prompt\": \"Once upon a time\", \"max_new_tokens\": 8,"
              .concat(" \"sampling\": {\"temperature\": 0}}")
              .getBytes(StandardCharsets.UTF_8));
      records.put(
          "json-future",
          ("{\"request_id\": \"json-future\", \"prompt\": \"Once upon a time\","
                  + " \"max_new_tokens\": 8, \"sampling\": {\"temperature\": 0},"
                  + " \"priority\": null}")
              .getBytes(StandardCharsets.UTF_8));
      records.put("avro-now", bytes(request("avro-now").toByteBuffer()));
      // A newer producer's schema: unknown to the job, registered under the topic's subject.
      registry.register("prompts-value", future());
      records.put(
          "avro-future",
          bytes(
              new BinaryMessageEncoder<GenericRecord>(GenericData.get(), future())
                  .encode(generic(request("avro-future"), future()))));
      records.put(
          "avro-v1",
          bytes(
              new BinaryMessageEncoder<GenericRecord>(GenericData.get(), v1)
                  .encode(generic(request("avro-v1"), v1))));
      // Bad JSON, each with the reason its dead letter must give.
      Map<String, String> badJson =
          Map.of(
              "{\"request_id\": \"json-bad\", \"prompt\": \"x\", \"temprature\": 0}",
              "unknown field 'temprature'",
              "{\"prompt\": \"x\"}",
              "missing required field 'request_id'",
              "{\"request_id\": \"j\", \"max_new_tokens\": \"eight\"}",
              "field 'max_new_tokens' must be a 32-bit integer, not string",
              "{\"request_id\": \"j\", \"max_new_tokens\": 1e30}",
              "field 'max_new_tokens' must be a 32-bit integer, not number",
              "{\"request_id\": \"j\", \"sampling\": {\"seed\": 123456789012345678901}}",
              "field 'sampling.seed' must be a 64-bit integer, not number");
      try (KafkaProducer<byte[], byte[]> producer =
          new KafkaProducer<>(
              Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()),
              new ByteArraySerializer(),
              new ByteArraySerializer())) {
        for (byte[] v : records.values()) {
          producer.send(new ProducerRecord<>("prompts", v));
        }
        for (String json : badJson.keySet()) {
          producer.send(new ProducerRecord<>("prompts", json.getBytes(StandardCharsets.UTF_8)));
        }
      }
      PipelineSettings settings = confluentOutput(kafka.bootstrapServers(), registry);
      org.apache.flink.configuration.Configuration conf =
          new org.apache.flink.configuration.Configuration();
      conf.setString("restart-strategy.type", "none");
      StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(1, conf);
      FlinferPipeline.build(env, settings);
      JobClient job = env.executeAsync("confluent-formats-it");
      try (KafkaConsumer<byte[], byte[]> consumer =
          io.flinfer.job.pipeline.PipelineTestSupportAccess.committedConsumer(
              kafka, "completions", "dead-letters")) {
        Map<String, String> texts = new HashMap<>();
        List<DeadLetter> dead = new ArrayList<>();
        RecordReader<DeadLetter> deadLetters =
            RecordReader.of(DeadLetter.getClassSchema(), new SchemaRegistryClient(registry.url()));
        long end = System.currentTimeMillis() + 120_000;
        while ((texts.size() < records.size() || dead.size() < badJson.size())
            && System.currentTimeMillis() < end
            && !job.getJobExecutionResult().isDone()) {
          for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
            if (r.topic().equals("completions")) {
              // Confluent's deserializer, Confluent's registry client.
              Object c = confluent.deserialize(r.value(), Completion.getClassSchema());
              texts.put(ConfluentSerdes.field(c, "request_id"), ConfluentSerdes.field(c, "text"));
            } else {
              dead.add(deadLetters.read(r.value()).record());
            }
          }
        }
        if (job.getJobExecutionResult().isDone()) {
          job.getJobExecutionResult().get(); // a failed job: its cause fails the test
        }
        assertThat(texts.keySet()).containsExactlyInAnyOrderElementsOf(records.keySet());
        // The same greedy request gives the same text whatever format it came in.
        assertThat(new java.util.HashSet<>(texts.values())).hasSize(1);
        assertThat(dead).hasSize(badJson.size());
        assertThat(dead).allSatisfy(d -> assertThat(d.getReason()).isEqualTo("undecodable"));
        assertThat(dead)
            .extracting(d -> d.getError().substring(d.getError().indexOf(": ") + 2))
            .containsExactlyInAnyOrderElementsOf(badJson.values());
      } finally {
        job.cancel().get();
      }
    }
  }

  @Test
  void theStandInRegistryAnswersAsConfluentsClientExpects() throws Exception {
    try (LoopbackSchemaRegistry registry = new LoopbackSchemaRegistry();
        ConfluentSerdes confluent = new ConfluentSerdes(registry.url())) {
      Object client = confluent.registryClient();
      Schema now = PromptRequest.getClassSchema();
      int id = confluent.registerWithConfluentClient(client, "s-value", now);
      assertThat(id).isPositive();
      // The same schema under another subject keeps its id; ours reads it back by id.
      assertThat(confluent.registerWithConfluentClient(client, "t-value", now)).isEqualTo(id);
      assertThat(new SchemaRegistryClient(registry.url()).schemaById(id)).isEqualTo(now);
      assertThat(new SchemaRegistryClient(registry.url()).register("s-value", now)).isEqualTo(id);
      // A schema the subject's readers cannot use is refused with Confluent's 409.
      Schema incompatible =
          SchemaBuilder.record("PromptRequest")
              .namespace("io.flinfer.avro")
              .fields()
              .requiredInt("required_new")
              .endRecord();
      assertThatThrownBy(
              () -> confluent.registerWithConfluentClient(client, "s-value", incompatible))
          .isInstanceOf(InvocationTargetException.class)
          .cause()
          .hasMessageContaining("incompatible")
          .hasMessageContaining("409");
      assertThatThrownBy(
              () -> new SchemaRegistryClient(registry.url()).register("s-value", incompatible))
          .hasMessageContaining("409")
          .hasMessageContaining("incompatible");
      assertThatThrownBy(() -> new SchemaRegistryClient(registry.url()).schemaById(999))
          .hasMessageContaining("404");
      // A subject's versions, as Confluent's client lists and fetches them; ours finds a
      // single-object writer schema among them by fingerprint.
      Schema older = PromptRequests.history().get(0);
      registry.register("u-value", older);
      int nowId = registry.register("u-value", now);
      assertThat(confluent.versionsWithConfluentClient(client, "u-value")).containsExactly(1, 2);
      String[] second = confluent.versionWithConfluentClient(client, "u-value", 2);
      assertThat(second[0]).isEqualTo(String.valueOf(nowId));
      assertThat(new Schema.Parser().parse(second[1])).isEqualTo(now);
      SchemaRegistryClient ours = new SchemaRegistryClient(registry.url());
      assertThat(
              ours.schemaByFingerprint("u-value", SchemaNormalization.parsingFingerprint64(older)))
          .isEqualTo(older);
      assertThat(ours.schemaByFingerprint("u-value", 42L)).isNull();
      assertThat(ours.schemaByFingerprint("no-such-value", 42L)).isNull();
    }
  }

  @Test
  void aRegistryThatRefusesTheOutputSchemaStopsTheJobBeforeItStarts() throws Exception {
    try (LoopbackSchemaRegistry registry = new LoopbackSchemaRegistry()) {
      // An earlier Completion that today's cannot read (it lacks request_id, which has no default).
      registry.register(
          "completions-value",
          SchemaBuilder.record("Completion")
              .namespace("io.flinfer.avro")
              .fields()
              .requiredInt("other")
              .endRecord());
      PipelineSettings settings = confluentOutput("127.0.0.1:1", registry);
      assertThatThrownBy(
              () ->
                  FlinferPipeline.build(
                      StreamExecutionEnvironment.createLocalEnvironment(1), settings))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("--output-format confluent: cannot register completions-value")
          .hasMessageContaining("409");
    }
  }

  /** The test model's pipeline, writing Confluent's wire format through {@code registry}. */
  private static PipelineSettings confluentOutput(
      String bootstrapServers, LoopbackSchemaRegistry registry) {
    Path model = SharedFiles.stories260kDir();
    return io.flinfer.job.pipeline.PipelineTestSupportAccess.settings(
            bootstrapServers,
            new ModelSource(
                model.resolve("stories260K.bin").toString(),
                model.resolve("tok512.bin").toString()))
        .schemaRegistryUrl(registry.url())
        .outputFormat(OutputFormat.CONFLUENT)
        .build();
  }

  private static byte[] bytes(ByteBuffer b) {
    byte[] out = new byte[b.remaining()];
    b.get(out);
    return out;
  }
}
