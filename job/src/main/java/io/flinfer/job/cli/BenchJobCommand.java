package io.flinfer.job.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.flinfer.avro.PromptRequest;
import io.flinfer.job.bench.BenchShape;
import io.flinfer.job.bench.JobBenchmark;
import io.flinfer.job.model.ModelLocator;
import io.flinfer.operators.flink.ModelSource;
import io.flinfer.runtime.forward.ModelRunners;
import io.flinfer.runtime.gguf.WeightTypes;
import io.flinfer.runtime.tensor.GgmlType;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * Prints JSON: output tokens/s through Kafka and Flink against the engine alone (and their ratio),
 * and the time to first token on the chunks topic against the engine's.
 */
@Command(
    name = "bench-job",
    mixinStandardHelpOptions = true,
    description = "Benchmark the streaming job against the engine alone; prints JSON.")
public final class BenchJobCommand implements Callable<Integer> {
  @Mixin ModelOptions modelOptions = new ModelOptions();

  @Option(
      names = "--requests",
      description =
          "Requests per wave (default: 256 on the test model, 64 on the others: waves of a"
              + " second or more, so that the throughput is the sustained one and not the few"
              + " milliseconds a request spends on its way in and out).")
  Integer requestsOption;

  @Option(names = "--output-tokens", defaultValue = "128")
  int outputTokens;

  @Option(
      names = "--repeats",
      defaultValue = "5",
      description = "Runs of the workload on each path; the median is reported.")
  int repeats;

  @Option(names = "--max-running-requests", defaultValue = "64")
  int maxRunning;

  @Option(names = "--checkpoint-interval-ms", defaultValue = "1000")
  long checkpointMillis;

  @Option(
      names = "--model-shape",
      defaultValue = "test",
      description =
          "test (the located model), llama-110m, or random weights in a bench-model shape:"
              + " llama-1b, llama-8b, qwen2.5-0.5b, gemma3-1b (default: ${DEFAULT-VALUE}).")
  String shape;

  @Option(
      names = "--dtype",
      description =
          "Tensor type of a bench-model shape's random weights: f32, f16, bf16, q8_0, q4_0, q4_k,"
              + " q6_k (default: f32 on the CPU, bf16 on other backends).")
  String dtype;

  @Option(names = "--backend", defaultValue = "cpu", description = "cpu (default), cuda, or auto.")
  String backend;

  @Option(
      names = "--threads",
      description =
          "Engine worker threads on both paths (default: all cores but one, which the in-process"
              + " broker and Flink's own threads use, as a TaskManager's runtime would have cores"
              + " of its own).")
  Integer threads;

  @Override
  public Integer call() throws Exception {
    System.setProperty("org.apache.avro.SERIALIZABLE_PACKAGES", "io.flinfer.avro");
    try {
      ModelRunners.byName(backend);
    } catch (IllegalArgumentException e) {
      System.err.println("error: " + e.getMessage());
      return 2;
    }
    ModelLocator.Location where;
    BenchShape benchShape = BenchShape.byId(shape);
    if ("test".equals(shape)) {
      where = modelOptions.locate();
    } else if ("llama-110m".equals(shape)) {
      java.nio.file.Path dir =
          java.nio.file.Path.of(System.getProperty("user.home"), ".cache", "flinfer", "bench");
      BenchModelCommand.randomModel(
          dir, BenchModelCommand.llama110mConfig()); // writes the checkpoint once
      java.nio.file.Path tok =
          io.flinfer.runtime.tokenizer.SyntheticVocabulary.write(
              32000, dir.resolve("llama-110m-random-tokenizer.bin"));
      where = new ModelLocator.Location(dir.resolve("llama-110m-random.bin"), tok);
    } else if (benchShape != null) {
      GgmlType type =
          dtype != null
              ? GgmlType.valueOf(dtype.toUpperCase(Locale.ROOT))
              : backend.equals("cpu") ? GgmlType.F32 : GgmlType.BF16;
      where = new ModelLocator.Location(benchShape.write(WeightTypes.uniform(type), null), null);
    } else {
      System.err.println("error: unknown model shape " + shape);
      return 2;
    }
    ModelSource source = JobOptions.modelSource(where);
    int requests = requestsOption != null ? requestsOption : "test".equals(shape) ? 256 : 64;
    int n = threads != null ? threads : Math.max(1, Runtime.getRuntime().availableProcessors() - 1);
    JobBenchmark b = new JobBenchmark(source, maxRunning, 32768, n, backend);
    // The workload is served `repeats` times over (fresh requests each time) on each path and the
    // run of median duration reported: the two paths share two cores with the broker and the
    // compiler, and single runs swing by several percent.
    List<List<PromptRequest>> works = new ArrayList<>();
    for (int k = 0; k < repeats; k++) {
      works.add(b.workload("r" + k + "-", requests, 16, 48, outputTokens, 7 + 10L * k));
    }
    var warm = b.workload("warm", 8, 16, 48, 16, 8);
    var single = b.workload("one", 8, 16, 48, 4, 9);
    // The same warm-up for both paths: a small wave, then two as large as the workload (the
    // compiler is still busy with Kafka's and Flink's code after one).
    var warmFull = b.workload("warm-full", requests, 16, 48, outputTokens, 11);
    var warmAgain = b.workload("warm-again", requests, 16, 48, outputTokens, 12);
    List<List<PromptRequest>> warmups = List.of(warm, warmFull, warmAgain);
    JobBenchmark.JobResults aloneRuns = b.engineAlone(warmups, works, single);
    JobBenchmark.Result alone = JobBenchmark.median(aloneRuns.allAtOnce());
    JobBenchmark.Result aloneSingle = aloneRuns.oneAtATime();
    System.err.printf(
        "engine alone: %.1f output tokens/s, ttft p50 %.1f ms; one at a time: ttft p50 %.1f ms%n",
        alone.outputTokensPerS(), alone.ttftP50(), aloneSingle.ttftP50());
    JobBenchmark.JobResults runs = b.throughJob(warmups, works, single, checkpointMillis);
    JobBenchmark.Result job = JobBenchmark.median(runs.allAtOnce());
    System.err.printf(
        "through Kafka + Flink: %.1f output tokens/s, ttft p50 %.1f ms; one at a time: ttft p50"
            + " %.1f ms%n",
        job.outputTokensPerS(), job.ttftP50(), runs.oneAtATime().ttftP50());
    ObjectMapper json = new ObjectMapper();
    ObjectNode root = json.createObjectNode();
    root.put("model", where.model().toString());
    root.put("backend", backend);
    root.put("requests", requests);
    root.put("output_tokens_per_request", outputTokens);
    root.put("load_average_before", BenchModelCommand.loadAverage());
    root.put("runs_each", repeats);
    root.put("engine_threads", n);
    BenchModelCommand.machine(root);
    root.putPOJO("engine_alone", alone);
    root.putPOJO("through_kafka_and_flink", job);
    root.putPOJO(
        "engine_alone_runs_tokens_per_s",
        aloneRuns.allAtOnce().stream().map(JobBenchmark.Result::outputTokensPerS).toList());
    root.putPOJO(
        "through_kafka_and_flink_runs_tokens_per_s",
        runs.allAtOnce().stream().map(JobBenchmark.Result::outputTokensPerS).toList());
    root.put(
        "throughput_ratio",
        Math.round(job.outputTokensPerS() / alone.outputTokensPerS() * 1000) / 1000.0);
    // The time Kafka and Flink add before a request's first token, measured with requests sent one
    // at a time: under a wave of hundreds, a request's first token waits in the engine's queue
    // behind the others (half a second and more), and the two paths' first-token times differ by
    // how fast each drains that queue, which the throughput ratio already shows.
    double addedTtft = runs.oneAtATime().ttftP50() - aloneSingle.ttftP50();
    root.put("added_ttft_p50_ms", Math.round(addedTtft * 10) / 10.0);
    root.put(
        "ttft_p50_difference_under_load_ms",
        Math.round((job.ttftP50() - alone.ttftP50()) * 10) / 10.0);
    ObjectNode one = root.putObject("one_at_a_time");
    one.put("requests", single.size());
    one.put("output_tokens_per_request", 4);
    one.putPOJO("engine_alone", aloneSingle);
    one.putPOJO("through_kafka_and_flink", runs.oneAtATime());
    System.out.println(json.writerWithDefaultPrettyPrinter().writeValueAsString(root));
    return 0;
  }
}
