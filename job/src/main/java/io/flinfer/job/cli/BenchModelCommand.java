package io.flinfer.job.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.flinfer.job.bench.ModelBenchmark;
import io.flinfer.runtime.forward.ModelRunnerFactory;
import io.flinfer.runtime.forward.ModelRunners;
import io.flinfer.runtime.llama2c.Llama2cCheckpointLoader;
import io.flinfer.runtime.llama2c.RandomCheckpointWriter;
import io.flinfer.runtime.model.LlamaModel;
import io.flinfer.runtime.model.ModelConfig;
import io.flinfer.runtime.tokenizer.SyntheticVocabulary;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * Prints JSON with decode tokens/s per batch size and prefill tokens/s, on the test model and on a
 * random-weight model in Llama-2-110M shapes, with the machine's load before and after.
 */
@Command(
    name = "bench-model",
    mixinStandardHelpOptions = true,
    description = "Benchmark the forward pass; prints JSON.")
public final class BenchModelCommand implements Callable<Integer> {
  @Mixin ModelOptions modelOptions = new ModelOptions();

  @Option(names = "--backend", defaultValue = "cpu", description = "cpu (default), cuda, or auto.")
  String backend;

  @Option(
      names = "--batch-sizes",
      split = ",",
      defaultValue = "1,8,32,128",
      description = "Decode batch sizes (default: ${DEFAULT-VALUE}).")
  List<Integer> batchSizes;

  @Option(
      names = "--prompt-len",
      defaultValue = "128",
      description =
          "Prompt tokens before decoding, and per prefill request (default: ${DEFAULT-VALUE}).")
  int promptLen;

  @Option(
      names = "--decode-steps",
      defaultValue = "32",
      description = "Timed decode steps per round after the prompt (default: ${DEFAULT-VALUE}).")
  int decodeSteps;

  @Option(
      names = "--prefill-requests",
      defaultValue = "4",
      description = "Requests in the timed prefill batch (default: ${DEFAULT-VALUE}).")
  int prefillRequests;

  @Option(
      names = "--seconds",
      defaultValue = "3",
      description = "Least time per decode measurement (default: ${DEFAULT-VALUE}).")
  double seconds;

  @Option(
      names = "--models",
      split = ",",
      defaultValue = "test,llama-110m",
      description =
          "test (the located model) and/or llama-110m (random weights) (default: ${DEFAULT-VALUE}).")
  List<String> models;

  @Option(
      names = "--work-dir",
      description =
          "Where the random-weight checkpoint is written (default: ~/.cache/flinfer/bench).")
  Path workDir;

  @Option(names = "--threads", description = "Worker threads (default: all cores).")
  Integer threads;

  @Override
  public Integer call() throws IOException {
    ModelRunnerFactory runners;
    try {
      runners = ModelRunners.byName(backend);
    } catch (IllegalArgumentException e) {
      System.err.println("error: " + e.getMessage());
      return 2;
    }
    int n = threads != null ? threads : Runtime.getRuntime().availableProcessors();
    ObjectMapper json = new ObjectMapper();
    ObjectNode root = json.createObjectNode();
    root.put("backend", backend);
    root.put("threads", n);
    root.put("cores", Runtime.getRuntime().availableProcessors());
    root.put("java", System.getProperty("java.vm.name") + " " + System.getProperty("java.version"));
    root.put("load_average_before", loadAverage());
    ArrayNode results = root.putArray("models");
    for (String which : models) {
      LlamaModel model =
          "llama-110m".equals(which)
              ? randomModel(workDir, ModelConfig.llama110M())
              : modelOptions.locate().load();
      System.err.printf("benchmarking %s %s with %d threads%n", which, model.config(), n);
      results.add(bench(json, which, model, n, runners));
    }
    root.put("load_average_after", loadAverage());
    System.out.println(json.writerWithDefaultPrettyPrinter().writeValueAsString(root));
    return 0;
  }

  private ObjectNode bench(
      ObjectMapper json, String name, LlamaModel model, int n, ModelRunnerFactory runners) {
    ModelBenchmark b = new ModelBenchmark(model, n, runners);
    int prompt = Math.min(promptLen, model.config().contextLength() - decodeSteps - 1);
    b.decode(4, prompt, decodeSteps, Math.min(1.0, seconds)); // warm the JIT
    ObjectNode m = json.createObjectNode();
    m.put("model", name.equals("test") ? model.id() : name);
    m.put("config", model.config().toString());
    m.put("weight_bytes", model.weights().matrixBytes());
    ArrayNode decode = m.putArray("decode");
    for (int batch : batchSizes) {
      ModelBenchmark.Result r = b.decode(batch, prompt, decodeSteps, seconds);
      System.err.printf("  decode batch %d: %.1f tokens/s%n", batch, r.tokensPerSecond());
      decode
          .addObject()
          .put("batch", batch)
          .put("tokens_per_s", round(r.tokensPerSecond()))
          .put("tokens", r.tokens())
          .put("seconds", round(r.seconds()))
          .put("context_at_end", r.contextAtEnd());
    }
    ModelBenchmark.Result p = b.prefill(prefillRequests, prompt, 3);
    System.err.printf(
        "  prefill %d x %d: %.1f tokens/s%n", prefillRequests, prompt, p.tokensPerSecond());
    m.putObject("prefill")
        .put("requests", prefillRequests)
        .put("prompt_len", prompt)
        .put("tokens_per_s", round(p.tokensPerSecond()))
        .put("seconds", round(p.seconds()));
    return m;
  }

  static ModelConfig llama110mConfig() {
    return ModelConfig.llama110M();
  }

  /** The random-weight model in {@code config}'s shape, written once under {@code workDir}. */
  static LlamaModel randomModel(Path workDir, ModelConfig config) throws IOException {
    Path dir =
        workDir != null
            ? workDir
            : Path.of(System.getProperty("user.home"), ".cache", "flinfer", "bench");
    Path file = dir.resolve("llama-110m-random.bin");
    System.err.println(
        "random-weight model at " + file + (Files.exists(file) ? "" : " (writing it)"));
    RandomCheckpointWriter.write(config, 1234, file);
    return Llama2cCheckpointLoader.load(file, SyntheticVocabulary::of);
  }

  private static double round(double v) {
    return Math.round(v * 100) / 100.0;
  }

  static String loadAverage() {
    try {
      return Files.readString(Path.of("/proc/loadavg")).trim();
    } catch (IOException e) {
      return "unknown";
    }
  }
}
