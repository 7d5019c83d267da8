package io.flinfer.job.sql;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.flinfer.job.cli.CommandStdout;
import io.flinfer.job.kafka.EmbeddedKafka;
import io.flinfer.job.pipeline.PipelineTestSupportAccess;
import io.flinfer.operators.engine.Engine;
import io.flinfer.operators.engine.EngineConfig;
import io.flinfer.operators.engine.Req;
import io.flinfer.operators.engine.TokenEvent;
import io.flinfer.runtime.grammar.JsonSchemaGrammar;
import io.flinfer.runtime.model.LlamaModel;
import io.flinfer.runtime.testing.SharedFiles;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.functions.ScalarFunction;
import org.apache.flink.types.Row;
import org.apache.flink.util.CloseableIterator;
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
 * Flink SQL's {@code ML_PREDICT} over a {@code provider = 'flinfer'} model: a table of prompts is
 * answered as {@code flinfer generate} answers each prompt alone, and bad rows give error values,
 * not a failed job.
 */
class MlPredictITCase {
  private static final Path MODEL = SharedFiles.stories260kDir();

  @TempDir Path dir;

  /** Fails the job once, at the sixth answer, after some rows are in flight in the model. */
  public static final class FailOnce extends ScalarFunction {
    static final AtomicInteger SEEN = new AtomicInteger();
    static final AtomicBoolean FAILED = new AtomicBoolean();

    public String eval(String text) {
      if (SEEN.incrementAndGet() == 6 && FAILED.compareAndSet(false, true)) {
        throw new IllegalStateException("injected failure");
      }
      return text;
    }
  }

  private static String createModel() {
    return "CREATE MODEL storyteller"
        + " INPUT (prompt STRING)"
        + " OUTPUT (text STRING, finish_reason STRING, completion_tokens INT, error STRING)"
        + " WITH ('provider' = 'flinfer',"
        + " 'model-path' = '"
        + MODEL.resolve("stories260K.bin")
        + "',"
        + " 'tokenizer-path' = '"
        + MODEL.resolve("tok512.bin")
        + "',"
        + " 'temperature' = '0', 'max-tokens' = '24')";
  }

  private static String generate(String prompt) {
    String s =
        CommandStdout.of(
            "generate",
            "--model",
            MODEL.toString(),
            "--prompt",
            prompt,
            "--max-new-tokens",
            "24",
            "--temperature",
            "0",
            "--threads",
            "1");
    return s.endsWith("\n") ? s.substring(0, s.length() - 1) : s;
  }

  @Test
  @Timeout(300)
  void aStreamingJobFromKafkaSurvivesAFailureWithEveryRowAnsweredOnce() throws Exception {
    String[] starts = {"Once upon a time", "Lily and Ben", "The sun was hot", "Tom had a red ball"};
    int n = 16;
    try (EmbeddedKafka kafka = EmbeddedKafka.start(dir.resolve("kafka"))) {
      kafka.createTopics(1, "sql-prompts", "sql-answers");
      try (KafkaProducer<byte[], byte[]> producer =
          new KafkaProducer<>(
              Map.of(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers()),
              new ByteArraySerializer(),
              new ByteArraySerializer())) {
        for (int i = 0; i < n; i++) {
          String json = "{\"id\": " + i + ", \"prompt\": \"" + starts[i % 4] + " " + i + "\"}";
          producer.send(new ProducerRecord<>("sql-prompts", json.getBytes(StandardCharsets.UTF_8)));
        }
      }
      Configuration conf = new Configuration();
      conf.setString("execution.checkpointing.interval", "200 ms");
      conf.setString("restart-strategy.type", "fixed-delay");
      conf.setString("restart-strategy.fixed-delay.attempts", "3");
      conf.setString("restart-strategy.fixed-delay.delay", "200 ms");
      conf.setString("parallelism.default", "1");
      TableEnvironment t =
          TableEnvironment.create(
              EnvironmentSettings.newInstance().inStreamingMode().withConfiguration(conf).build());
      String kafkaOptions =
          "'connector' = 'kafka', 'properties.bootstrap.servers' = '"
              + kafka.bootstrapServers()
              + "', 'format' = 'json'";
      t.executeSql(
          "CREATE TABLE prompts (id INT, prompt STRING) WITH ("
              + kafkaOptions
              + ", 'topic' = 'sql-prompts', 'properties.group.id' = 'sql',"
              + " 'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset')");
      t.executeSql(
          "CREATE TABLE answers (id INT, text STRING) WITH ("
              + kafkaOptions
              + ", 'topic' = 'sql-answers', 'sink.delivery-guarantee' = 'exactly-once',"
              + " 'properties.transaction.timeout.ms' = '600000',"
              + " 'sink.transactional-id-prefix' = 'sql-answers')");
      t.executeSql(createModel());
      t.createTemporarySystemFunction("fail_once", FailOnce.class);
      t.executeSql(
              "INSERT INTO answers SELECT id, fail_once(text) FROM"
                  + " ML_PREDICT(TABLE prompts, MODEL storyteller, DESCRIPTOR(prompt))")
          .await();
      assertThat(FailOnce.FAILED).isTrue();
      Map<Integer, String> answers = new HashMap<>();
      int records = 0;
      try (KafkaConsumer<byte[], byte[]> c =
          PipelineTestSupportAccess.committedConsumer(kafka, "sql-answers")) {
        long end = System.currentTimeMillis() + 30_000;
        while (answers.size() < n && System.currentTimeMillis() < end) {
          for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) {
            JsonNode row = new ObjectMapper().readTree(r.value());
            answers.put(row.get("id").asInt(), row.get("text").asText());
            records++;
          }
        }
        for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofSeconds(1))) {
          records++; // nothing more may come
        }
      }
      assertThat(answers).hasSize(n);
      assertThat(records).as("each row answered once").isEqualTo(n);
      for (int i : new int[] {0, 5, 15}) {
        assertThat(answers.get(i)).as("row " + i).isEqualTo(generate(starts[i % 4] + " " + i));
      }
    }
  }

  @Test
  @Timeout(300)
  void conversationsAreRenderedByTheModelsChatTemplate() throws Exception {
    Path qwen = SharedFiles.root().resolve("models/zoo/qwen2-tiny.gguf");
    TableEnvironment t = TableEnvironment.create(EnvironmentSettings.inStreamingMode());
    t.executeSql(
        "CREATE MODEL assistant INPUT (messages ARRAY<ROW<role STRING, content STRING>>)"
            + " OUTPUT (text STRING, prompt_tokens INT, error STRING)"
            + " WITH ('provider' = 'flinfer', 'model-path' = '"
            + qwen
            + "',"
            + " 'temperature' = '0', 'max-tokens' = '8')");
    int promptTokens;
    t.executeSql(
        "CREATE TEMPORARY VIEW chats AS SELECT * FROM (VALUES"
            + " (ARRAY[ROW('system', 'Be brief.'), ROW('user', 'Hi')])) AS v(messages)");
    try (CloseableIterator<Row> rows =
        t.executeSql(
                "SELECT text, prompt_tokens, error FROM ML_PREDICT(TABLE chats, MODEL assistant,"
                    + " DESCRIPTOR(messages))")
            .collect()) {
      Row r = rows.next();
      assertThat(r.getField(2)).isNull();
      assertThat((String) r.getField(0)).isNotNull();
      // The template's role markers make the prompt longer than the two messages' words.
      assertThat((Integer) r.getField(1)).isGreaterThan(10);
      promptTokens = (Integer) r.getField(1);
    }
    // Tools reach the template (the prompt grows by them); the answer's calls are a column.
    String tools =
        "[{\"type\": \"function\", \"function\": {\"name\": \"add\", \"parameters\":"
            + " {\"type\": \"object\", \"properties\": {\"a\": {\"type\": \"integer\"}}}}}]";
    t.executeSql(
        "CREATE MODEL caller INPUT (messages ARRAY<ROW<role STRING, content STRING>>)"
            + " OUTPUT (prompt_tokens INT, error STRING,"
            + " tool_calls ARRAY<ROW<id STRING, name STRING, arguments STRING>>)"
            + " WITH ('provider' = 'flinfer', 'model-path' = '"
            + qwen
            + "', 'temperature' = '0', 'max-tokens' = '8', 'tools' = '"
            + tools
            + "')");
    try (CloseableIterator<Row> rows =
        t.executeSql(
                "SELECT prompt_tokens, error, tool_calls FROM ML_PREDICT(TABLE chats, MODEL"
                    + " caller, DESCRIPTOR(messages))")
            .collect()) {
      Row r = rows.next();
      assertThat(r.getField(1)).isNull();
      assertThat((Integer) r.getField(0)).isGreaterThan(promptTokens + 20);
      // The random-weight model's answer makes no call.
      assertThat((Object[]) r.getField(2)).isEmpty();
    }
    t.executeSql(
        "CREATE MODEL loose INPUT (messages ARRAY<ROW<role STRING, content STRING>>)"
            + " OUTPUT (text STRING) WITH ('provider' = 'flinfer', 'model-path' = '"
            + qwen
            + "', 'tools' = '{\"type\": \"function\"}')");
    assertThatThrownBy(
            () ->
                t.executeSql(
                    "SELECT text FROM ML_PREDICT(TABLE chats, MODEL loose, DESCRIPTOR(messages))"))
        .hasStackTraceContaining("tools must be a JSON array");
  }

  /**
   * A thinking model's switches ({@code chat-template-kwargs}) reach its template, its output
   * columns give the thinking and the answer apart, and switches for a prompt STRING are refused
   * when the model is used.
   */
  @Test
  @Timeout(300)
  void aThinkingModelTakesItsTemplateSwitchesAndAnswersApart() throws Exception {
    Path qwen = SharedFiles.root().resolve("models/zoo/qwen3-tiny.gguf");
    TableEnvironment t = TableEnvironment.create(EnvironmentSettings.inStreamingMode());
    String with =
        " WITH ('provider' = 'flinfer', 'model-path' = '"
            + qwen
            + "', 'temperature' = '0', 'max-tokens' = '4'";
    String conversation = " INPUT (messages ARRAY<ROW<role STRING, content STRING>>)";
    String columns =
        " OUTPUT (text STRING, reasoning_content STRING, content STRING," + " prompt_tokens INT)";
    // A budget caps a thought; this random-weight model opens none, so it changes nothing here.
    t.executeSql(
        "CREATE MODEL thinker"
            + conversation
            + columns
            + with
            + ", 'thinking-token-budget' = '8')");
    t.executeSql(
        "CREATE MODEL answerer"
            + conversation
            + columns
            + with
            + ", 'chat-template-kwargs' = '{\"enable_thinking\": false}')");
    t.executeSql(
        "CREATE MODEL misused INPUT (prompt STRING) OUTPUT (text STRING)"
            + with
            + ", 'chat-template-kwargs' = '{\"enable_thinking\": false}')");
    t.executeSql(
        "CREATE TEMPORARY VIEW asks AS SELECT * FROM (VALUES"
            + " (ARRAY[ROW('user', 'Hi')])) AS v(messages)");
    int[] promptTokens = new int[2];
    String[] models = {"thinker", "answerer"};
    for (int i = 0; i < 2; i++) {
      try (CloseableIterator<Row> rows =
          t.executeSql(
                  "SELECT text, reasoning_content, content, prompt_tokens FROM ML_PREDICT(TABLE"
                      + " asks, MODEL "
                      + models[i]
                      + ", DESCRIPTOR(messages))")
              .collect()) {
        Row r = rows.next();
        // The random-weight model does not open a thought: its text is all answer.
        assertThat(r.getField(1)).isNull();
        assertThat(r.getField(2)).isEqualTo(r.getField(0));
        promptTokens[i] = (Integer) r.getField(3);
      }
    }
    // enable_thinking false closes an empty thought: <think>, \n\n, </think>, \n\n.
    assertThat(promptTokens[1]).isEqualTo(promptTokens[0] + 4);
    t.executeSql("CREATE TEMPORARY VIEW lines AS SELECT * FROM (VALUES ('Hi')) AS v(prompt)");
    assertThatThrownBy(
            () ->
                t.executeSql(
                    "SELECT text FROM ML_PREDICT(TABLE lines, MODEL misused, DESCRIPTOR(prompt))"))
        .hasStackTraceContaining("chat-template-kwargs go with messages");
    t.executeSql(
        "CREATE MODEL capped INPUT (prompt STRING) OUTPUT (text STRING)"
            + with
            + ", 'thinking-token-budget' = '8')");
    assertThatThrownBy(
            () ->
                t.executeSql(
                    "SELECT text FROM ML_PREDICT(TABLE lines, MODEL capped, DESCRIPTOR(prompt))"))
        .hasStackTraceContaining("thinking-token-budget goes with messages");
  }

  /** A model whose answers match a regular expression: each row's answer is one of its texts. */
  @Test
  @Timeout(300)
  void aModelWithARegexAnswersWithItsMatches() throws Exception {
    Path qwen = SharedFiles.root().resolve("models/zoo/qwen2-tiny.gguf");
    TableEnvironment t = TableEnvironment.create(EnvironmentSettings.inStreamingMode());
    t.executeSql(
        "CREATE MODEL mood INPUT (prompt STRING) OUTPUT (text STRING, error STRING)"
            + " WITH ('provider' = 'flinfer', 'model-path' = '"
            + qwen
            + "', 'temperature' = '0', 'max-tokens' = '8', 'response-format' = 'regex',"
            + " 'regex' = '(happy|sad|so-so)!')");
    t.executeSql(
        "CREATE TEMPORARY VIEW reviews AS SELECT * FROM (VALUES ('Great film'), ('Dull'))"
            + " AS v(prompt)");
    try (CloseableIterator<Row> rows =
        t.executeSql(
                "SELECT text, error FROM ML_PREDICT(TABLE reviews, MODEL mood, DESCRIPTOR(prompt))")
            .collect()) {
      int n = 0;
      while (rows.hasNext()) {
        Row r = rows.next();
        assertThat(r.getField(1)).isNull();
        assertThat((String) r.getField(0)).isIn("happy!", "sad!", "so-so!");
        n++;
      }
      assertThat(n).isEqualTo(2);
    }
  }

  /**
   * A model whose answers follow a JSON Schema: each answer is the start of an instance; a schema
   * with a keyword that is not enforced is refused when the model is used.
   */
  @Test
  @Timeout(300)
  void aModelWithAJsonSchemaAnswersWithItsInstancesAndABadSchemaIsRefused() throws Exception {
    Path qwen = SharedFiles.root().resolve("models/zoo/qwen2-tiny.gguf");
    String schema =
        "{\"type\": \"object\", \"properties\": {\"mood\": {\"enum\": [\"happy\","
            + " \"sad\"]}, \"score\": {\"type\": \"integer\"}}}";
    TableEnvironment t = TableEnvironment.create(EnvironmentSettings.inStreamingMode());
    String with =
        " WITH ('provider' = 'flinfer', 'model-path' = '"
            + qwen
            + "', 'temperature' = '0', 'max-tokens' = '24', 'response-format' = 'json_schema',"
            + " 'json-schema' = '";
    t.executeSql(
        "CREATE MODEL rater INPUT (prompt STRING) OUTPUT (text STRING, error STRING)"
            + with
            + schema
            + "')");
    // The same model drafting tokens: the same answers.
    t.executeSql(
        "CREATE MODEL drafting INPUT (prompt STRING) OUTPUT (text STRING, error STRING)"
            + with
            + schema
            + "', 'speculative-num-draft-tokens' = '4')");
    t.executeSql(
        "CREATE MODEL overdrafted INPUT (prompt STRING) OUTPUT (text STRING, error STRING)"
            + with
            + schema
            + "', 'speculative-num-draft-tokens' = '17')");
    t.executeSql(
        "CREATE MODEL broken INPUT (prompt STRING) OUTPUT (text STRING, error STRING)"
            + with
            + "{\"type\": \"object\", \"properties\": {\"s\": {\"type\": \"integer\","
            + " \"not\": {\"const\": 3}}}}')");
    t.executeSql(
        "CREATE TEMPORARY VIEW reviews AS SELECT * FROM (VALUES ('Great film'), ('Dull'))"
            + " AS v(prompt)");
    java.util.Set<String> answers = new java.util.HashSet<>();
    try (CloseableIterator<Row> rows =
        t.executeSql(
                "SELECT text, error FROM ML_PREDICT(TABLE reviews, MODEL rater, DESCRIPTOR(prompt))")
            .collect()) {
      int n = 0;
      while (rows.hasNext()) {
        Row r = rows.next();
        assertThat(r.getField(1)).isNull();
        byte[] text = ((String) r.getField(0)).getBytes(StandardCharsets.UTF_8);
        assertThat(JsonSchemaGrammar.compile(schema).start().accept(text, 0, text.length))
            .as((String) r.getField(0))
            .isTrue();
        answers.add((String) r.getField(0));
        n++;
      }
      assertThat(n).isEqualTo(2);
    }
    try (CloseableIterator<Row> rows =
        t.executeSql(
                "SELECT text FROM ML_PREDICT(TABLE reviews, MODEL drafting, DESCRIPTOR(prompt))")
            .collect()) {
      java.util.Set<String> drafted = new java.util.HashSet<>();
      rows.forEachRemaining(r -> drafted.add((String) r.getField(0)));
      assertThat(drafted).isEqualTo(answers);
    }
    assertThatThrownBy(
            () ->
                t.executeSql(
                    "SELECT text FROM ML_PREDICT(TABLE reviews, MODEL broken,"
                        + " DESCRIPTOR(prompt))"))
        .hasStackTraceContaining("keyword not is not supported");
    // The option is read: a value beyond the engine's is refused when the model is used.
    assertThatThrownBy(
            () ->
                t.executeSql(
                    "SELECT text FROM ML_PREDICT(TABLE reviews, MODEL overdrafted,"
                        + " DESCRIPTOR(prompt))"))
        .hasStackTraceContaining("speculative-num-draft-tokens must be in [0, 16], got 17");
  }

  /**
   * A table of texts scored: each row's prompt log-probabilities are what the engine reads for that
   * prompt alone, bit for bit, and their sum is the row's log-likelihood.
   */
  @Test
  @Timeout(300)
  void aTableOfTextsIsScoredAsTheEngineScoresEachAlone() throws Exception {
    List<String> texts = List.of("Once upon a time", "Lily and Ben went to the park", "Tom");
    TableEnvironment t = TableEnvironment.create(EnvironmentSettings.inStreamingMode());
    t.getConfig().set("parallelism.default", "1");
    StringBuilder values = new StringBuilder();
    for (String p : texts) {
      values.append(values.length() == 0 ? "" : ", ").append("('").append(p).append("')");
    }
    t.executeSql(
        "CREATE TEMPORARY VIEW texts AS SELECT * FROM (VALUES " + values + ") AS v(prompt)");
    t.executeSql(
        "CREATE MODEL scorer INPUT (prompt STRING)"
            + " OUTPUT (prompt_tokens INT, prompt_logprob DOUBLE, prompt_logprobs ARRAY<FLOAT>,"
            + " error STRING)"
            + " WITH ('provider' = 'flinfer', 'model-path' = '"
            + MODEL.resolve("stories260K.bin")
            + "', 'tokenizer-path' = '"
            + MODEL.resolve("tok512.bin")
            + "', 'temperature' = '0', 'max-tokens' = '1')");
    LlamaModel model = SharedFiles.stories260k();
    int answered = 0;
    try (CloseableIterator<Row> rows =
        t.executeSql(
                "SELECT prompt, prompt_tokens, prompt_logprob, prompt_logprobs, error"
                    + " FROM ML_PREDICT(TABLE texts, MODEL scorer, DESCRIPTOR(prompt))")
            .collect()) {
      while (rows.hasNext()) {
        Row r = rows.next();
        assertThat(r.getField(4)).isNull();
        Float[] scores = (Float[]) r.getField(3);
        int[] ids = model.tokenizer().encode((String) r.getField(0), true);
        assertThat((Integer) r.getField(1)).isEqualTo(ids.length);
        float[] alone = scoredAlone(model, ids);
        assertThat(scores).hasSize(ids.length - 1);
        double sum = 0;
        for (int i = 0; i < scores.length; i++) {
          assertThat(scores[i]).isEqualTo(alone[i]);
          sum += scores[i];
        }
        assertThat((Double) r.getField(2)).isEqualTo(sum);
        answered++;
      }
    }
    assertThat(answered).isEqualTo(texts.size());
  }

  private static float[] scoredAlone(LlamaModel model, int[] ids) {
    EngineConfig config = EngineConfig.builder().maxTotalTokens(512).threads(1).build();
    try (Engine e = Engine.create(model, config)) {
      e.submit(Req.builder("a", ids).promptLogprobs(0).maxNewTokens(1).build());
      while (e.hasWork()) {
        for (TokenEvent ev : e.step()) {
          if (ev.promptLogprobs() != null) {
            return ev.promptLogprobs().logprobs();
          }
        }
      }
    }
    throw new AssertionError("no prompt logprobs");
  }

  @Test
  @Timeout(300)
  void aTableOfPromptsIsAnsweredAsGenerateAnswersEachAndBadRowsGiveErrors() throws Exception {
    List<String> prompts =
        List.of(
            "Once upon a time",
            "Lily and Ben",
            "The sun was hot",
            "Tom had a red ball",
            "Once upon a time there was");
    TableEnvironment t = TableEnvironment.create(EnvironmentSettings.inStreamingMode());
    t.getConfig().set("parallelism.default", "1");
    StringBuilder values = new StringBuilder();
    for (String p : prompts) {
      values.append(values.length() == 0 ? "" : ", ").append("('").append(p).append("')");
    }
    String huge = "x".repeat(300_000);
    values.append(", (CAST(NULL AS STRING)), ('").append(huge).append("')");
    t.executeSql(
        "CREATE TEMPORARY VIEW prompts AS SELECT * FROM (VALUES " + values + ") AS v(prompt)");
    t.executeSql(createModel());
    Map<String, Row> answers = new HashMap<>();
    int errors = 0;
    try (CloseableIterator<Row> rows =
        t.executeSql(
                "SELECT prompt, text, finish_reason, completion_tokens, error"
                    + " FROM ML_PREDICT(TABLE prompts, MODEL storyteller, DESCRIPTOR(prompt))")
            .collect()) {
      while (rows.hasNext()) {
        Row r = rows.next();
        String prompt = (String) r.getField(0);
        if ("error".equals(r.getField(2))) {
          errors++;
          assertThat((String) r.getField(4)).isNotBlank();
          assertThat(r.getField(1)).isNull();
        } else {
          answers.put(prompt, r);
        }
      }
    }
    assertThat(errors).isEqualTo(2);
    assertThat(answers.keySet()).containsExactlyInAnyOrderElementsOf(prompts);
    for (String p : prompts) {
      assertThat(answers.get(p).getField(1)).as(p).isEqualTo(generate(p));
    }
  }
}
