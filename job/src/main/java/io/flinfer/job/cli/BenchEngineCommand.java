package io.flinfer.job.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.flinfer.job.bench.BenchShape;
import io.flinfer.job.bench.EngineBenchmark;
import io.flinfer.memcache.KvPool;
import io.flinfer.memcache.KvStoreType;
import io.flinfer.operators.engine.EngineConfig;
import io.flinfer.operators.engine.Req;
import io.flinfer.operators.engine.SpeculativeConfig;
import io.flinfer.runtime.forward.ModelRunnerFactory;
import io.flinfer.runtime.forward.ModelRunners;
import io.flinfer.runtime.grammar.ResponseFormat;
import io.flinfer.runtime.model.LlamaModel;
import io.flinfer.runtime.sampling.SamplingParams;
import io.flinfer.runtime.tensor.GgmlType;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.function.Supplier;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * Prints JSON for the three serving workloads on the test model and the 110M-shaped model:
 * throughput, time to first token, inter-token latency, cache hit rate, retractions, prefill tokens
 * computed against the minimum, radix cache on against off, and continuous batching against one
 * request at a time.
 */
@Command(
    name = "bench-engine",
    mixinStandardHelpOptions = true,
    description = "Benchmark the continuous-batching engine; prints JSON.")
public final class BenchEngineCommand implements Callable<Integer> {
  /** Answer length of the few-shot workload (b). */
  static final int SHORT_ANSWER = 4;

  @Mixin ModelOptions modelOptions = new ModelOptions();

  @Option(
      names = "--models",
      split = ",",
      defaultValue = "test,llama-110m",
      description =
          "test, llama-110m, or another random-weight shape of bench-model's (llama-1b, llama-8b,"
              + " qwen2.5-0.5b) (default: ${DEFAULT-VALUE}).")
  List<String> models;

  @Option(names = "--backend", defaultValue = "cpu", description = "cpu (default), cuda, or auto.")
  String backend;

  @Option(
      names = "--dtype",
      description =
          "Tensor type of the random-weight shapes other than llama-110m: f32, f16, bf16"
              + " (default: f32 on the CPU, bf16 on CUDA).")
  String dtype;

  @Option(
      names = "--workloads",
      split = ",",
      defaultValue = "independent,shared,multi-turn,long-lived",
      description =
          "Which of independent, shared, multi-turn, long-lived, tiers, speculative (default:"
              + " ${DEFAULT-VALUE}).")
  List<String> workloads;

  @Option(
      names = "--speculative-num-draft-tokens",
      defaultValue = "8",
      description =
          "Draft tokens per step in the speculative workload (default: ${DEFAULT-VALUE}).")
  int draftTokens;

  @Option(
      names = "--tier-workload",
      split = ",",
      defaultValue = "64,8,40,16",
      description =
          "The tiers workload: conversations, turns, message tokens, answer tokens (default: ${DEFAULT-VALUE}).")
  List<Integer> tierWorkload;

  @Option(names = "--threads", description = "Worker threads (default: all cores).")
  Integer threads;

  @Option(
      names = "--page-size",
      defaultValue = "1",
      description = "KV tokens per page on every workload (default: ${DEFAULT-VALUE}).")
  int pageSize;

  @Option(
      names = "--kv-store-type",
      description =
          "KV store type on every workload: fp32, fp16, bf16, fp8-e4m3, fp8-e5m2 (default: the"
              + " backend's own: fp32 on the CPU, the weights' 16-bit type on CUDA). The pool"
              + " holds the same number of tokens whatever the type; the JSON gives its bytes.")
  String kvStoreType;

  @Override
  public Integer call() throws Exception {
    ObjectMapper json = new ObjectMapper();
    ObjectNode root = json.createObjectNode();
    BenchModelCommand.machine(root);
    root.put("load_average_before", BenchModelCommand.loadAverage());
    ObjectNode all = root.putObject("models");
    ModelRunnerFactory runners;
    try {
      runners = ModelRunners.byName(backend);
    } catch (IllegalArgumentException e) {
      System.err.println("error: " + e.getMessage());
      return 2;
    }
    root.put("backend", backend);
    root.put("page_size", pageSize);
    KvStoreType kv =
        kvStoreType == null
            ? null
            : KvStoreType.valueOf(kvStoreType.toUpperCase(java.util.Locale.ROOT).replace('-', '_'));
    root.put("kv_store_type", kvStoreType == null ? "the backend's own" : kvStoreType);
    for (String which : models) {
      boolean big = !"test".equals(which);
      LlamaModel model;
      if ("llama-110m".equals(which)) {
        model = BenchModelCommand.randomModel(null, BenchModelCommand.llama110mConfig());
      } else if (big) {
        BenchShape shape = BenchShape.byId(which);
        if (shape == null) {
          System.err.println("error: unknown model " + which);
          return 2;
        }
        GgmlType type =
            dtype != null
                ? GgmlType.valueOf(dtype.toUpperCase(java.util.Locale.ROOT))
                : backend.equals("cpu") ? GgmlType.F32 : GgmlType.BF16;
        model = shape.load(type, null);
      } else {
        model = modelOptions.locate().load();
      }
      System.err.println("benchmarking the engine on " + which + " " + model.config());
      all.set(which, bench(json, model, big, runners, kv));
    }
    root.put("load_average_after", BenchModelCommand.loadAverage());
    System.out.println(json.writerWithDefaultPrettyPrinter().writeValueAsString(root));
    return 0;
  }

  private ObjectNode bench(
      ObjectMapper json,
      LlamaModel model,
      boolean big,
      ModelRunnerFactory runners,
      KvStoreType kv) {
    EngineBenchmark b = new EngineBenchmark(model, runners);
    int n = threads != null ? threads : Runtime.getRuntime().availableProcessors();
    int poolTokens = big ? 24576 : 32768;
    EngineConfig.Builder base =
        EngineConfig.builder()
            .threads(n)
            .pageSize(pageSize)
            .kvStoreType(kv)
            .maxRunningRequests(64)
            .maxTotalTokens(poolTokens)
            .chunkedPrefillSize(512)
            .maxPrefillTokens(4096);
    ObjectNode m = json.createObjectNode();
    // Warm every path (prefill, decode, the radix cache on and off) so that no measurement
    // depends on which ran before it.
    KvStoreType used = null;
    for (boolean radix : new boolean[] {true, false}) {
      EngineConfig warm = base.radixCache(radix).build();
      used = b.run(warm, b.independent(16, 16, 48, 32, 91)).kvStoreType();
      b.run(warm, b.sharedSystemPrompt(16, 128, 32, 8, 92));
      b.run(warm, b.multiTurn(4, 3, 32, 8, 93));
    }
    base.radixCache(true);
    // The pool's bytes in the type the engine chose (the backend's own when none was asked for).
    m.put(
        "kv_pool_bytes",
        KvPool.cellSizeBytes(
                model.config().layers(),
                model.config().kvHeads(),
                model.config().headDim(),
                used.bytes())
            * (long) poolTokens);

    // (a) independent prompts: continuous batching against one request at a time.
    if (workloads.contains("independent")) {
      int aRequests = 128;
      int aOutput = big ? 128 : 256;
      EngineBenchmark.Result batched =
          b.run(base.maxRunningRequests(128).build(), b.independent(aRequests, 16, 48, aOutput, 1));
      log("independent, continuous batching", batched);
      EngineBenchmark.Result single =
          b.run(
              base.maxRunningRequests(1).build(), b.independent(big ? 4 : 16, 16, 48, aOutput, 1));
      base.maxRunningRequests(64);
      log("independent, one at a time", single);
      ObjectNode a = m.putObject("independent");
      a.putPOJO("continuous_batching", batched);
      a.putPOJO("one_at_a_time", single);
      a.put(
          "output_throughput_ratio", round(batched.outputTokensPerS() / single.outputTokensPerS()));
    }

    // (b) a long shared system prompt (80% of each prompt): few-shot prompts with short answers,
    // as few-shot evaluation asks for, and the same prompts with 16-token answers.
    if (workloads.contains("shared")) {
      int sys = big ? 256 : 320;
      int q = sys / 4;
      int bRequests = big ? 32 : 64;
      for (int answer : new int[] {SHORT_ANSWER, 16}) {
        ObjectNode o =
            compare(
                json,
                "shared system prompt, " + answer + "-token answers",
                base,
                () -> b.sharedSystemPrompt(bRequests, sys, q, answer, 2),
                b,
                big);
        o.put("answer_tokens", answer);
        m.set(
            answer == SHORT_ANSWER
                ? "shared_system_prompt"
                : "shared_system_prompt_" + answer + "_token_answers",
            o);
      }
    }

    // (c) multi-turn chats.
    if (workloads.contains("multi-turn")) {
      int convs = 16;
      int turns = 8;
      int message = big ? 64 : 40;
      m.set(
          "multi_turn",
          compare(
              json, "multi-turn", base, () -> b.multiTurn(convs, turns, message, 16, 3), b, big));
    }
    // (e) multi-turn chats whose working set is 8x the pool: L1 only, L2, L2+L3, and L3 after a
    // restart.
    if (workloads.contains("tiers")) {
      m.set("tiers", TierBench.run(json, b, base, tierWorkload));
    }
    // (f) speculative decoding: n-gram drafts against none, at 1 and 4 running requests.
    if (workloads.contains("speculative")) {
      m.set("speculative", speculative(json, b, base, model, big));
    }
    // (d) a long-lived engine: waves of (a) on one engine, whose pool fills with cached requests
    // and hands back slots in eviction order. Where its tokens lie decides how fast attention
    // reads them; the last waves should decode as fast as the first. On one worker thread, as the
    // job's engines run by default (on two, the machine's noise hides the difference). The test
    // model only: on the 110M shape waves long enough to cycle the pool take minutes each.
    if (workloads.contains("long-lived") && !big) {
      List<EngineBenchmark.Workload> waves = new ArrayList<>();
      for (int w = 0; w < 8; w++) {
        waves.add(b.independent(128, 16, 48, 128, 100 + w));
      }
      List<EngineBenchmark.Result> rs = b.runWaves(base.threads(1).build(), waves);
      base.threads(n);
      ObjectNode d = m.putObject("long_lived");
      d.put("waves", rs.size());
      d.putPOJO(
          "output_tokens_per_s_per_wave",
          rs.stream().map(r -> Math.round(r.outputTokensPerS())).toList());
      double first = rs.get(0).outputTokensPerS();
      double lastThree =
          rs.subList(rs.size() - 3, rs.size()).stream()
              .mapToDouble(EngineBenchmark.Result::outputTokensPerS)
              .average()
              .orElse(0);
      d.put("last_three_over_first", round(lastThree / first));
      System.err.printf(
          "  long-lived engine: first wave %.0f out/s, last three %.0f out/s%n", first, lastThree);
      for (EngineBenchmark.Result r : rs) {
        log("long-lived wave", r);
      }
    }
    return m;
  }

  /** Story openings for the test model, {@code n} of them (cycling). */
  private static List<int[]> stories(LlamaModel model, int n) {
    String[] openings = {
      "Once upon a time",
      "Tom and his dog went to the park.",
      "Lily had a red ball.",
      "One day, a little bird",
      "Sam liked to play",
      "The sun was hot.",
      "Mia found a box",
      "Ben and Sue"
    };
    List<int[]> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      out.add(model.tokenizer().encode(openings[i % openings.length], true));
    }
    return out;
  }

  /** The schema of the speculative workload's JSON answers. */
  private static final String BENCH_SCHEMA =
      "{\"type\": \"object\", \"properties\": {\"name\": {\"type\": \"string\", \"maxLength\":"
          + " 12}, \"city\": {\"type\": \"string\", \"maxLength\": 12}, \"age\": {\"type\":"
          + " \"integer\"}, \"tags\": {\"type\": \"array\", \"items\": {\"enum\": [\"red\","
          + " \"green\", \"blue\"]}, \"maxItems\": 3}}}";

  /**
   * Speculative decoding on against off, on the same requests (greedy, each its own prompt): free
   * text at 1 and 4 running requests, and answers to one JSON schema one at a time. The outputs
   * must be identical, and the JSON says whether they were.
   */
  private ObjectNode speculative(
      ObjectMapper json,
      EngineBenchmark b,
      EngineConfig.Builder base,
      LlamaModel model,
      boolean big) {
    ObjectNode o = json.createObjectNode();
    o.put("draft_tokens", draftTokens);
    o.put(
        "prompts",
        big ? "random tokens; random weights decide how often a text repeats" : "story openings");
    int output = big ? 128 : 256;
    int rounds = big ? 1 : 3;
    List<int[]> own =
        big
            ? b.independent(8, 16, 48, 1, 7).initial().stream().map(Req::originInputIds).toList()
            : stories(model, 8);
    ObjectNode text = o.putObject("text");
    for (int running : new int[] {1, 4}) {
      text.set(
          "running_" + running,
          onAgainstOff(
              json,
              b,
              base,
              running,
              rounds,
              "text",
              () -> b.prompts(own.subList(0, 2 * running), output)));
    }
    // Answers to one schema: their keys and punctuation repeat from answer to answer.
    SamplingParams p =
        SamplingParams.builder()
            .responseFormat(ResponseFormat.JSON_SCHEMA)
            .jsonSchema(BENCH_SCHEMA)
            .build();
    o.put("json_schema", BENCH_SCHEMA);
    o.set(
        "json_schema_running_1",
        onAgainstOff(json, b, base, 1, rounds, "json schema", () -> b.prompts(own, p, 200)));
    return o;
  }

  /**
   * One workload with drafts against without, alternating runs (after one of each to warm up), the
   * run of median duration of each reported.
   */
  private ObjectNode onAgainstOff(
      ObjectMapper json,
      EngineBenchmark b,
      EngineConfig.Builder base,
      int running,
      int rounds,
      String name,
      Supplier<EngineBenchmark.Workload> w) {
    EngineConfig off = base.maxRunningRequests(running).speculative(null).build();
    EngineConfig on =
        base.speculative(new SpeculativeConfig(draftTokens, 1, 4, Math.max(8, running))).build();
    base.maxRunningRequests(64).speculative(null);
    b.run(off, w.get());
    b.run(on, w.get());
    List<EngineBenchmark.Result> offs = new ArrayList<>();
    List<EngineBenchmark.Result> ons = new ArrayList<>();
    for (int i = 0; i < rounds; i++) {
      offs.add(b.run(off, w.get()));
      ons.add(b.run(on, w.get()));
    }
    EngineBenchmark.Result plain = median(offs);
    EngineBenchmark.Result drafted = median(ons);
    log("speculative " + name + ", " + running + " running, off", plain);
    log("speculative " + name + ", " + running + " running, on", drafted);
    System.err.printf(
        "  drafts accepted %.2f, steps %d -> %d%n",
        drafted.draftAcceptanceRate(), plain.steps(), drafted.steps());
    ObjectNode r = json.createObjectNode();
    r.put("runs_each", rounds);
    r.putPOJO("off", plain);
    r.putPOJO("on", drafted);
    r.put("outputs_identical", plain.outputsDigest() == drafted.outputsDigest());
    r.put("draft_acceptance_rate", round(drafted.draftAcceptanceRate()));
    r.put("steps_ratio_on_over_off", round((double) drafted.steps() / plain.steps()));
    r.put(
        "output_throughput_ratio_on_over_off",
        round(drafted.outputTokensPerS() / plain.outputTokensPerS()));
    return r;
  }

  /**
   * Radix cache on against off. On the test model a run takes well under a second and swings with
   * the machine and the compiler, so both are run in turns, twice to warm up and then five times,
   * and the run of median duration of each is reported. The 110M-shaped model's runs take seconds
   * and are run once each.
   */
  private static ObjectNode compare(
      ObjectMapper json,
      String name,
      EngineConfig.Builder base,
      Supplier<EngineBenchmark.Workload> workload,
      EngineBenchmark b,
      boolean big) {
    EngineConfig radixOn = base.radixCache(true).build();
    EngineConfig radixOff = base.radixCache(false).build();
    base.radixCache(true);
    int warmups = big ? 0 : 2;
    int repeats = big ? 1 : 5;
    List<EngineBenchmark.Result> ons = new ArrayList<>();
    List<EngineBenchmark.Result> offs = new ArrayList<>();
    for (int i = 0; i < warmups + repeats; i++) {
      EngineBenchmark.Result on = b.run(radixOn, workload.get());
      EngineBenchmark.Result off = b.run(radixOff, workload.get());
      if (i >= warmups) {
        ons.add(on);
        offs.add(off);
      }
    }
    EngineBenchmark.Result on = median(ons);
    EngineBenchmark.Result off = median(offs);
    log(name + ", radix on", on);
    log(name + ", radix off", off);
    ObjectNode o = json.createObjectNode();
    o.put("runs_each", repeats);
    o.putPOJO("radix_on", on);
    o.putPOJO("radix_off", off);
    o.put(
        "prefill_computed_over_minimum",
        round((double) on.prefillComputed() / on.prefillMinimum()));
    o.put(
        "total_throughput_ratio_on_over_off", round(on.totalTokensPerS() / off.totalTokensPerS()));
    return o;
  }

  private static EngineBenchmark.Result median(List<EngineBenchmark.Result> runs) {
    runs.sort(Comparator.comparingDouble(EngineBenchmark.Result::seconds));
    return runs.get(runs.size() / 2);
  }

  private static void log(String what, EngineBenchmark.Result r) {
    System.err.printf(
        "  %-36s %8.1f in/s %8.1f out/s  ttft p50 %.1f ms  itl p50 %.1f ms  hit %.2f  retract %d  prefill %d (min %d)  sched %.1f%%%n",
        what,
        r.inputTokensPerS(),
        r.outputTokensPerS(),
        r.ttftP50(),
        r.itlP50(),
        r.cacheHitRate(),
        r.retractions(),
        r.prefillComputed(),
        r.prefillMinimum(),
        100 * r.schedulerFraction());
  }

  /** Runs this command alone: a GPU machine can run it with the Flink-free jars only. */
  public static void main(String[] args) {
    System.exit(new picocli.CommandLine(new BenchEngineCommand()).execute(args));
  }

  private static double round(double v) {
    return Math.round(v * 100) / 100.0;
  }
}
