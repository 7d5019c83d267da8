package io.flinfer.job.pipeline;

import io.flinfer.operators.engine.EngineConfig;
import io.flinfer.operators.flink.CarriedHeaders;
import io.flinfer.operators.flink.InferenceSettings;
import io.flinfer.operators.flink.ModelSource;
import io.flinfer.operators.format.OutputFormat;
import io.flinfer.operators.request.RequestLimits;
import java.io.Serializable;
import java.time.Duration;

/**
 * Where the job reads and writes, and how it serves. Immutable; build with {@link #builder()},
 * which validates. With a {@link #range()} it is an offline replay of that range of the prompts
 * topic: it ends when the range is served, and commits no offsets of the live job's group. Without
 * a chunks topic, streamed chunks are not written. The prompt records' headers named by {@link
 * #carriedHeaders()} travel with their requests.
 */
public record PipelineSettings(
    String bootstrapServers,
    String promptsTopic,
    String completionsTopic,
    String chunksTopic,
    String deadLettersTopic,
    String groupId,
    ModelSource model,
    String modelId,
    InferenceSettings inference,
    RequestLimits limits,
    Duration dedupeWindow,
    String schemaRegistryUrl,
    OutputFormat outputFormat,
    long checkpointIntervalMillis,
    PromptRange range,
    CarriedHeaders carriedHeaders)
    implements Serializable {

  /**
   * A request's tokens leave the inference operator together at most every 10 ms: below what a
   * reader of a stream notices, and on a GPU about one decode step, so there every token still
   * leaves at once; a fast CPU engine sends a few tokens per record instead of one.
   */
  public static final long DEFAULT_STREAM_INTERVAL_MILLIS = 10;

  /** A request id is answered once within a day of its first record. */
  public static final Duration DEFAULT_DEDUPE_WINDOW = Duration.ofHours(24);

  public static Builder builder() {
    return new Builder();
  }

  /** Validating builder with the default topic names. */
  public static final class Builder {
    private String bootstrapServers;
    private String promptsTopic = "flinfer.prompts";
    private String completionsTopic = "flinfer.completions";
    private String chunksTopic = "flinfer.chunks";
    private String deadLettersTopic = "flinfer.dead-letters";
    private String groupId;
    private ModelSource model;
    private String modelId = "model";
    private EngineConfig engine =
        EngineConfig.builder()
            .maxRunningRequests(32)
            .maxTotalTokens(8192)
            .chunkedPrefillSize(256)
            .threads(1)
            .build();
    private String backend = "cpu";
    private RequestLimits limits = RequestLimits.defaults();
    private Duration dedupeWindow = DEFAULT_DEDUPE_WINDOW;
    private String schemaRegistryUrl;
    private OutputFormat outputFormat = OutputFormat.AVRO;
    private long checkpointIntervalMillis = 1000;
    private long streamIntervalMillis = DEFAULT_STREAM_INTERVAL_MILLIS;
    private PromptRange range;
    private CarriedHeaders carriedHeaders = CarriedHeaders.none();

    public Builder bootstrapServers(String v) {
      bootstrapServers = v;
      return this;
    }

    public Builder topics(String prompts, String completions, String chunks, String deadLetters) {
      promptsTopic = prompts;
      completionsTopic = completions;
      chunksTopic = chunks;
      deadLettersTopic = deadLetters;
      return this;
    }

    /**
     * Serve only this range of the prompts topic and end; the consumer group is then {@code
     * flinfer-replay} unless set.
     */
    public Builder replay(PromptRange v) {
      range = v;
      return this;
    }

    public Builder groupId(String v) {
      groupId = v;
      return this;
    }

    public Builder model(ModelSource v, String id) {
      model = v;
      modelId = id;
      return this;
    }

    /** Each inference subtask's engine settings and backend ({@code cpu}, {@code cuda}, ...). */
    public Builder engine(EngineConfig config, String backend) {
      this.engine = config;
      this.backend = backend;
      return this;
    }

    /** How large each part of a request, and each record the job writes, may be. */
    public Builder limits(RequestLimits v) {
      limits = v;
      return this;
    }

    /**
     * Where Confluent-format prompt records' schemas are looked up, and where the output's are
     * registered with {@link OutputFormat#CONFLUENT}; null: no registry.
     */
    public Builder schemaRegistryUrl(String v) {
      schemaRegistryUrl = v;
      return this;
    }

    /** How completions, chunks and dead letters are written. */
    public Builder outputFormat(OutputFormat v) {
      outputFormat = v;
      return this;
    }

    /** How long a request id stays taken after its first record: a second gets a dead letter. */
    public Builder dedupeWindow(Duration v) {
      dedupeWindow = v;
      return this;
    }

    /**
     * At most how often a request's tokens are sent on, together (its first token and its end go at
     * once); 0 sends every token at once.
     */
    public Builder streamIntervalMillis(long v) {
      streamIntervalMillis = v;
      return this;
    }

    /**
     * The prompt records' headers that travel with their requests: into the metadata, and back out
     * as headers on the completion, its chunks and any dead letter.
     */
    public Builder carryHeaders(CarriedHeaders v) {
      carriedHeaders = v;
      return this;
    }

    public Builder checkpointIntervalMillis(long v) {
      checkpointIntervalMillis = v;
      return this;
    }

    public PipelineSettings build() {
      if (bootstrapServers == null || bootstrapServers.isBlank()) {
        throw new IllegalArgumentException("bootstrap servers are required");
      }
      if (model == null) {
        throw new IllegalArgumentException("a model is required");
      }
      if (dedupeWindow == null || dedupeWindow.isNegative() || dedupeWindow.isZero()) {
        throw new IllegalArgumentException("the dedupe window must be positive");
      }
      if (outputFormat == OutputFormat.CONFLUENT && schemaRegistryUrl == null) {
        throw new IllegalArgumentException("--output-format confluent needs --schema-registry-url");
      }
      if (streamIntervalMillis < 0) {
        throw new IllegalArgumentException("stream interval must be >= 0 ms");
      }
      if (checkpointIntervalMillis < 10) {
        throw new IllegalArgumentException(
            "checkpoint interval must be at least 10 ms (completions commit on checkpoints)");
      }
      for (String topic : new String[] {promptsTopic, completionsTopic, deadLettersTopic}) {
        if (topic == null || topic.isBlank()) {
          throw new IllegalArgumentException(
              "the prompts, completions and dead-letter topics are required");
        }
      }
      return new PipelineSettings(
          bootstrapServers,
          promptsTopic,
          completionsTopic,
          chunksTopic,
          deadLettersTopic,
          groupId != null ? groupId : range == null ? "flinfer" : "flinfer-replay",
          model,
          modelId,
          new InferenceSettings(model, engine, backend, streamIntervalMillis),
          limits,
          dedupeWindow,
          schemaRegistryUrl,
          outputFormat,
          checkpointIntervalMillis,
          range,
          carriedHeaders);
    }
  }
}
