package io.flinfer.job.cli;

import io.flinfer.job.model.ModelLocator;
import io.flinfer.job.pipeline.FlinferPipeline;
import io.flinfer.job.pipeline.PipelineSettings;
import io.flinfer.job.pipeline.PromptRange;
import java.util.concurrent.Callable;
import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * Serves a range of the prompts topic offline and ends: the same pipeline as the live job, on a
 * bounded source, writing completions (exactly once) and dead letters to topics of its own. It runs
 * on a Flink cluster ({@code flink run flinfer.jar replay ...}) or, started by {@code ./flinfer},
 * in-process.
 */
@Command(
    name = "replay",
    mixinStandardHelpOptions = true,
    description = "Serve a range of the prompts topic offline, then end.")
public final class ReplayCommand implements Callable<Integer> {
  @Mixin ModelOptions modelOptions = new ModelOptions();

  @Mixin EngineOptions engine = new EngineOptions();

  @Mixin LimitOptions limits = new LimitOptions();

  @Mixin StateOptions state = new StateOptions();

  @Mixin FormatOptions formats = new FormatOptions();

  @Option(names = "--bootstrap-servers", required = true, description = "Kafka bootstrap servers.")
  String bootstrapServers;

  @Option(names = "--prompts-topic", defaultValue = "flinfer.prompts")
  String promptsTopic;

  @Option(
      names = "--from",
      defaultValue = "earliest",
      description =
          "Where each partition starts (inclusive): earliest, a time (epoch ms or ISO-8601), or"
              + " partition:offset pairs like 0:1200,1:1187 (default: ${DEFAULT-VALUE}).")
  String from;

  @Option(
      names = "--until",
      defaultValue = "latest",
      description =
          "Where each partition stops (exclusive): latest (its end when the replay starts), a"
              + " time, or partition:offset pairs; partitions not named are not read (default:"
              + " ${DEFAULT-VALUE}).")
  String until;

  @Option(names = "--completions-topic", defaultValue = "flinfer.replay.completions")
  String completionsTopic;

  @Option(names = "--dead-letters-topic", defaultValue = "flinfer.replay.dead-letters")
  String deadLettersTopic;

  @Option(
      names = "--chunks-topic",
      description = "Also write streamed requests' chunks here (default: not written).")
  String chunksTopic;

  @Option(names = "--parallelism", description = "Inference subtasks (default: the environment's).")
  Integer parallelism;

  @Override
  public Integer call() throws Exception {
    System.setProperty("org.apache.avro.SERIALIZABLE_PACKAGES", "io.flinfer.avro");
    ModelLocator.Location where = modelOptions.locate();
    PromptRange range = PromptRange.parse(promptsTopic, from, until);
    PipelineSettings settings =
        formats
            .apply(limits.apply(engine.apply(PipelineSettings.builder(), where)))
            .bootstrapServers(bootstrapServers)
            .topics(promptsTopic, completionsTopic, chunksTopic, deadLettersTopic)
            .replay(range)
            .build();
    if (parallelism != null && parallelism < 1) {
      throw new IllegalArgumentException("--parallelism must be at least 1");
    }
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
    InProcessRun.requireKernels(env);
    // A replay keeps state only where told: resuming another range's checkpoint would be wrong.
    Configuration conf = new Configuration();
    state.apply(conf, null);
    env.configure(conf);
    if (parallelism != null) {
      env.setParallelism(parallelism);
    }
    FlinferPipeline.build(env, settings);
    JobExecutionResult result = env.execute("flinfer replay " + promptsTopic + " " + range);
    System.err.printf(
        "replayed %s %s in %.1f s: completions in %s, dead letters in %s%n",
        promptsTopic, range, result.getNetRuntime() / 1000.0, completionsTopic, deadLettersTopic);
    return 0;
  }
}
