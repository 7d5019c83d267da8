package io.flinfer.job.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.flinfer.job.bench.BenchShape;
import io.flinfer.job.bench.ModelBenchmark;
import io.flinfer.memcache.KvStoreType;
import io.flinfer.runtime.forward.ModelRunnerFactory;
import io.flinfer.runtime.forward.ModelRunners;
import io.flinfer.runtime.gguf.WeightTypes;
import io.flinfer.runtime.kernel.ActivationRounding;
import io.flinfer.runtime.kernel.Gemm;
import io.flinfer.runtime.llama2c.Llama2cCheckpointLoader;
import io.flinfer.runtime.llama2c.RandomCheckpointWriter;
import io.flinfer.runtime.model.LlamaModel;
import io.flinfer.runtime.model.ModelConfig;
import io.flinfer.runtime.model.ModelLoader;
import io.flinfer.runtime.sampling.SamplingParams;
import io.flinfer.runtime.tensor.GgmlType;
import io.flinfer.runtime.tokenizer.SyntheticVocabulary;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * Prints JSON with decode tokens/s per batch size and prefill tokens/s, on the test model and on
 * random-weight models in real models' shapes, with the bytes and operations each figure implies
 * and the machine's load before and after.
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
      description =
          "Requests in the timed prefill batch; 0 skips the prefill measurement (default:"
              + " ${DEFAULT-VALUE}).")
  int prefillRequests;

  @Option(
      names = "--seconds",
      defaultValue = "3",
      description = "Least time per decode measurement (default: ${DEFAULT-VALUE}).")
  double seconds;

  @Option(
      names = "--prompts",
      defaultValue = "own",
      description =
          "Decode batches where each sequence has its own prompt (own), all share one (shared),"
              + " or both, reported apart (default: ${DEFAULT-VALUE}).")
  String prompts;

  @Option(
      names = "--models",
      split = ",",
      description =
          "test (the located model), a .gguf file, or random weights in a shape: llama-110m,"
              + " llama-1b, llama-8b, qwen2.5-0.5b, gemma3-1b (default: test,llama-110m; only"
              + " test, the file, when --model is given).")
  List<String> models;

  @Option(
      names = "--dtype",
      description =
          "Tensor type of the random-weight models: f32, f16, bf16, q8_0, q4_0, q4_k, q6_k, or"
              + " q4_k_m (llama.cpp's mix of Q4_K and Q6_K), quantized by the project's own"
              + " quantizer (default: f32 on the CPU, bf16 on CUDA).")
  String dtype;

  @Option(
      names = "--work-dir",
      description = "Where random-weight models are written (default: ~/.cache/flinfer/bench).")
  Path workDir;

  @Option(names = "--threads", description = "Worker threads (default: all cores).")
  Integer threads;

  @Option(
      names = "--kv-store-type",
      description =
          "KV store type: fp32, fp16, bf16, fp8-e4m3, fp8-e5m2 (default: the backend's first, fp32"
              + " on the CPU). llama.cpp's default cache is fp16.")
  String kvStoreType;

  /** Decode by sampling with these (prompts are prefilled greedily either way). */
  @Mixin SamplingFlags samplingFlags = new SamplingFlags();

  @Option(
      names = "--device-bandwidth-gbps",
      defaultValue = "3350",
      description =
          "Memory bandwidth the decode figures are compared with, GB/s (default: an H100 SXM's"
              + " ${DEFAULT-VALUE}).")
  double bandwidthGbps;

  @Option(
      names = "--device-peak-tflops",
      defaultValue = "989",
      description =
          "Dense 16-bit tensor throughput the prefill figures are compared with, TFLOP/s"
              + " (default: an H100 SXM's ${DEFAULT-VALUE}).")
  double peakTflops;

  @Override
  public Integer call() throws IOException {
    ModelRunnerFactory runners;
    try {
      runners = ModelRunners.byName(backend);
    } catch (IllegalArgumentException e) {
      System.err.println("error: " + e.getMessage());
      return 2;
    }
    if (!List.of("own", "shared", "both").contains(prompts)) {
      System.err.println("error: --prompts must be own, shared or both");
      return 2;
    }
    boolean gpu = !backend.equals("cpu");
    WeightTypes type;
    try {
      type =
          dtype != null
              ? WeightTypes.parse(dtype)
              : WeightTypes.uniform(gpu ? GgmlType.BF16 : GgmlType.F32);
    } catch (IllegalArgumentException e) {
      System.err.println("error: --dtype: " + e.getMessage());
      return 2;
    }
    KvStoreType kv = null;
    if (kvStoreType != null) {
      try {
        kv =
            EngineOptions.parse(
                KvStoreType.class, "--kv-store-type", kvStoreType.replace('-', '_'));
      } catch (IllegalArgumentException e) {
        System.err.println("error: " + e.getMessage());
        return 2;
      }
    }
    SamplingParams sampling;
    try {
      sampling = samplingFlags.params().seed(7).build();
    } catch (IllegalArgumentException e) {
      System.err.println("error: " + e.getMessage());
      return 2;
    }
    int n = threads != null ? threads : Runtime.getRuntime().availableProcessors();
    ObjectMapper json = new ObjectMapper();
    ObjectNode root = json.createObjectNode();
    root.put("backend", backend);
    root.put("threads", n);
    root.put(
        "kv_store_type",
        kv != null ? kv.name().toLowerCase(Locale.ROOT).replace('_', '-') : "default");
    machine(root);
    root.put(
        "sampling",
        sampling.isGreedy()
            ? "greedy; the runner returns each request's top token"
            : samplingFlags + " (sequence r seeded 7 + r); prompts prefilled greedily");
    root.put("load_average_before", loadAverage());
    ArrayNode results = root.putArray("models");
    for (String which : modelsToRun()) {
      LlamaModel model = load(which, type);
      System.err.printf("benchmarking %s %s with %d threads%n", which, model.config(), n);
      results.add(bench(json, which, model, n, runners, gpu, kv, sampling));
    }
    root.put("load_average_after", loadAverage());
    System.out.println(json.writerWithDefaultPrettyPrinter().writeValueAsString(root));
    return 0;
  }

  /** {@code --models}, or, left out, the file {@code --model} names alone or the two defaults. */
  List<String> modelsToRun() {
    if (models != null) {
      return models;
    }
    return modelOptions.model != null ? List.of("test") : List.of("test", "llama-110m");
  }

  private LlamaModel load(String which, WeightTypes type) throws IOException {
    if (which.equals("test")) {
      return modelOptions.locate().load();
    }
    if (which.endsWith(".gguf")) {
      return ModelLoader.load(Path.of(which), null);
    }
    BenchShape shape = BenchShape.byId(which);
    if (shape == null) {
      throw new IllegalArgumentException("unknown model " + which);
    }
    return shape.load(type, workDir);
  }

  private ObjectNode bench(
      ObjectMapper json,
      String name,
      LlamaModel model,
      int n,
      ModelRunnerFactory runners,
      boolean gpu,
      KvStoreType kv,
      SamplingParams sampling) {
    ModelConfig c = model.config();
    ModelBenchmark b = new ModelBenchmark(model, n, runners, kv, sampling);
    int prompt = Math.min(promptLen, c.contextLength() - decodeSteps - 1);
    b.decode(4, prompt, decodeSteps, Math.min(1.0, seconds), false); // warm-up
    ObjectNode m = json.createObjectNode();
    m.put("model", name.equals("test") ? model.id() : name);
    m.put("config", c.toString());
    m.put("file_weight_bytes", model.weights().matrixBytes());
    ArrayNode decode = m.putArray("decode");
    for (int batch : batchSizes) {
      for (boolean shared : new boolean[] {false, true}) {
        if (shared ? prompts.equals("own") : prompts.equals("shared")) {
          continue;
        }
        ModelBenchmark.Result r = b.decode(batch, prompt, decodeSteps, seconds, shared);
        double bytes =
            ModelBenchmark.decodeBytesPerStep(
                c, r.weightBytesPerStep(), batch, r.meanContext(), r.kvElementBytes());
        double stepSeconds = r.seconds() / (r.tokens() / (double) batch);
        double gbps = bytes / stepSeconds / 1e9;
        System.err.printf(
            "  decode batch %d (%s prompts): %.1f tokens/s, %.0f GB/s%n",
            batch, shared ? "shared" : "own", r.tokensPerSecond(), gbps);
        ObjectNode row =
            decode
                .addObject()
                .put("batch", batch)
                .put("prompts", shared ? "shared" : "own")
                .put("tokens_per_s", round(r.tokensPerSecond()))
                .put("tokens", r.tokens())
                .put("seconds", round(r.seconds()))
                .put("mean_context", round(r.meanContext()))
                .put("bytes_per_step", (long) bytes)
                .put("read_gb_per_s", round(gbps));
        if (gpu) {
          row.put("bandwidth_fraction", round3(gbps / bandwidthGbps));
        }
      }
    }
    if (gpu) {
      m.put("device_bandwidth_gbps", bandwidthGbps);
      m.put("device_peak_tflops", peakTflops);
    }
    if (prefillRequests <= 0) {
      return m;
    }
    ModelBenchmark.Result p = b.prefill(prefillRequests, prompt, 3);
    double flops = ModelBenchmark.prefillFlopsPerToken(c, p.meanContext());
    double tflops = flops * p.tokensPerSecond() / 1e12;
    System.err.printf(
        "  prefill %d x %d: %.1f tokens/s, %.1f TFLOP/s%n",
        prefillRequests, prompt, p.tokensPerSecond(), tflops);
    ObjectNode pre =
        m.putObject("prefill")
            .put("requests", prefillRequests)
            .put("prompt_len", prompt)
            .put("tokens_per_s", round(p.tokensPerSecond()))
            .put("seconds", round(p.seconds()))
            .put("flops_per_token", (long) flops)
            .put("tflops", round(tflops));
    if (gpu) {
      pre.put("peak_fraction", round3(tflops / peakTflops));
    }
    return m;
  }

  static ModelConfig llama110mConfig() {
    return ModelConfig.llama110M();
  }

  /** The llama2.c random-weight model in {@code config}'s shape, written once under {@code dir}. */
  static LlamaModel randomModel(Path workDir, ModelConfig config) throws IOException {
    Path dir = workDir != null ? workDir : BenchShape.defaultDir();
    Path file = dir.resolve("llama-110m-random.bin");
    System.err.println(
        "random-weight model at " + file + (Files.exists(file) ? "" : " (writing it)"));
    RandomCheckpointWriter.write(config, 1234, file);
    return Llama2cCheckpointLoader.load(file, SyntheticVocabulary::of);
  }

  /** Runs this command alone: a GPU machine can run it with the Flink-free jars only. */
  public static void main(String[] args) {
    System.exit(new picocli.CommandLine(new BenchModelCommand()).execute(args));
  }

  private static double round(double v) {
    return Math.round(v * 100) / 100.0;
  }

  private static double round3(double v) {
    return Math.round(v * 1000) / 1000.0;
  }

  /** What every benchmark's JSON says of the machine: cores, CPU model, vector widths, JVM. */
  static void machine(ObjectNode root) {
    root.put("cores", Runtime.getRuntime().availableProcessors());
    root.put("cpu", cpuModel());
    root.put("vector_bits_available", Gemm.availableVectorBits());
    root.put("vector_bits_used", Gemm.VECTOR_BITS);
    // Quantized products: activations rounded as ggml rounds them (default) or unrounded
    // (-Dflinfer.activations=f32); K-quant products in floats (default) or in integers
    // (-Dflinfer.kquant.activations=q8).
    root.put("activations", System.getProperty(ActivationRounding.PROPERTY, "ggml"));
    root.put("kquant_activations", System.getProperty("flinfer.kquant.activations", "f32"));
    root.put("java", System.getProperty("java.vm.name") + " " + System.getProperty("java.version"));
  }

  static String cpuModel() {
    try {
      for (String line : Files.readAllLines(Path.of("/proc/cpuinfo"))) {
        if (line.startsWith("model name")) {
          return line.substring(line.indexOf(':') + 1).trim();
        }
      }
    } catch (IOException e) {
      // not Linux
    }
    return System.getProperty("os.arch");
  }

  static String loadAverage() {
    try {
      return Files.readString(Path.of("/proc/loadavg")).trim();
    } catch (IOException e) {
      return "unknown";
    }
  }
}
