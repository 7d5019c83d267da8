package io.flinfer.job.cli;

import io.flinfer.job.model.ModelLocator;
import io.flinfer.job.pipeline.FlinferPipeline;
import io.flinfer.job.pipeline.PipelineSettings;
import java.util.concurrent.Callable;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.streaming.api.environment.LocalStreamEnvironment;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * Runs the streaming job against an existing Kafka cluster, on whatever Flink environment started
 * it: {@code flink run flinfer.jar job --bootstrap-servers kafka:9092 --model PATH}.
 */
@Command(
    name = "job",
    mixinStandardHelpOptions = true,
    description = "Run the streaming job on a Flink cluster against an existing Kafka.")
public final class JobCommand implements Callable<Integer> {
  @Mixin ModelOptions modelOptions = new ModelOptions();

  @Mixin JobOptions jobOptions = new JobOptions();

  @Option(names = "--bootstrap-servers", required = true, description = "Kafka bootstrap servers.")
  String bootstrapServers;

  @Override
  public Integer call() throws Exception {
    System.setProperty("org.apache.avro.SERIALIZABLE_PACKAGES", "io.flinfer.avro");
    ModelLocator.Location where = modelOptions.locate();
    PipelineSettings settings = jobOptions.settings(bootstrapServers, where);
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
    InProcessRun.requireKernels(env);
    // In this JVM, state defaults to a folder of the user's; on a cluster, to the cluster's
    // checkpoint folder (execution.checkpointing.dir), resumed from just the same.
    String folder =
        env instanceof LocalStreamEnvironment
            ? StateOptions.defaultFolder("job-" + settings.groupId()).toString()
            : env.getConfiguration().get(CheckpointingOptions.CHECKPOINTS_DIRECTORY);
    Configuration conf = new Configuration();
    jobOptions.state.apply(conf, folder);
    if (env instanceof LocalStreamEnvironment) {
      jobOptions.metrics.check();
      jobOptions.metrics.apply(conf);
    }
    env.configure(conf);
    FlinferPipeline.build(env, settings);
    env.execute("flinfer");
    return 0;
  }
}
