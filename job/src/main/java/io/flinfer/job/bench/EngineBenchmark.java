package io.flinfer.job.bench;

import io.flinfer.operators.engine.Engine;
import io.flinfer.operators.engine.EngineConfig;
import io.flinfer.operators.engine.EngineStats;
import io.flinfer.operators.engine.Req;
import io.flinfer.operators.engine.TokenEvent;
import io.flinfer.runtime.forward.CpuModelRunner;
import io.flinfer.runtime.forward.ModelRunnerFactory;
import io.flinfer.runtime.model.LlamaModel;
import io.flinfer.runtime.sampling.SamplingParams;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * Serving workloads driven through the engine alone, timed per token event: independent random
 * prompts, many requests sharing a long system prompt, and multi-turn chats whose every turn
 * extends the conversation so far.
 */
public final class EngineBenchmark {

  /** What one run measured. Latencies in milliseconds. */
  public record Result(
      int requests,
      long inputTokens,
      long outputTokens,
      double seconds,
      double inputTokensPerS,
      double outputTokensPerS,
      double totalTokensPerS,
      double ttftP50,
      double ttftP99,
      double itlP50,
      double itlP99,
      double cacheHitRate,
      long retractions,
      long prefillComputed,
      long prefillMinimum,
      double schedulerFraction,
      io.flinfer.memcache.tier.TierStats tiers,
      io.flinfer.memcache.KvStoreType kvStoreType,
      long steps,
      long draftTokens,
      long acceptedDraftTokens,
      long outputsDigest) {

    /** Accepted draft tokens over those verified; 0 without speculation. */
    public double draftAcceptanceRate() {
      return draftTokens == 0 ? 0 : (double) acceptedDraftTokens / draftTokens;
    }
  }

  /** Supplies requests: an initial set, then follow-ups as requests finish. */
  public interface Workload {
    List<Req> initial();

    /** The request that follows {@code finished}, or null. */
    default Req next(String finished, int[] promptIds, int[] outputIds) {
      return null;
    }

    /** Prefill tokens if every shared token were computed once. */
    long prefillMinimum();
  }

  private final LlamaModel model;
  private final ModelRunnerFactory backend;

  public EngineBenchmark(LlamaModel model) {
    this(model, CpuModelRunner::new);
  }

  public EngineBenchmark(LlamaModel model, ModelRunnerFactory backend) {
    this.model = model;
    this.backend = backend;
  }

  /** Serves {@code w} on a fresh engine. */
  public Result run(EngineConfig config, Workload w) {
    try (Engine engine = new Engine(model, config, backend)) {
      return serve(engine, w);
    }
  }

  /**
   * Serves each workload in turn on one engine, as a server's engine lives on: its pool is full of
   * cached prefixes after the first waves and its slots come back in eviction order.
   */
  public List<Result> runWaves(EngineConfig config, List<Workload> waves) {
    try (Engine engine = new Engine(model, config, backend)) {
      List<Result> out = new ArrayList<>();
      for (Workload w : waves) {
        out.add(serve(engine, w));
      }
      return out;
    }
  }

  private Result serve(Engine engine, Workload w) {
    EngineStats before = engine.stats();
    Deque<Req> queue = new ArrayDeque<>(w.initial());
    Map<String, Req> submitted = new HashMap<>();
    Map<String, Long> submitTime = new HashMap<>();
    Map<String, Long> lastTime = new HashMap<>();
    Map<String, List<Integer>> outputs = new HashMap<>();
    List<Double> ttft = new ArrayList<>();
    List<Double> itl = new ArrayList<>();
    long inputTokens = 0;
    long outputTokens = 0;
    long start = System.nanoTime();
    while (!queue.isEmpty() || engine.hasWork()) {
      while (!queue.isEmpty() && engine.canAccept()) {
        Req r = queue.poll();
        engine.submit(r);
        submitted.put(r.id(), r);
        submitTime.put(r.id(), System.nanoTime());
        inputTokens += r.promptLen();
      }
      List<TokenEvent> events = engine.step();
      long t = System.nanoTime();
      for (TokenEvent e : events) {
        if (e.index() >= 0) {
          outputTokens++;
          outputs.computeIfAbsent(e.requestId(), k -> new ArrayList<>()).add(e.tokenId());
          Long last = lastTime.put(e.requestId(), t);
          if (last == null) {
            ttft.add((t - submitTime.get(e.requestId())) / 1e6);
          } else {
            itl.add((t - last) / 1e6);
          }
        }
        if (e.isLast()) {
          Req done = submitted.remove(e.requestId());
          int[] out =
              outputs.getOrDefault(e.requestId(), List.of()).stream()
                  .mapToInt(Integer::intValue)
                  .toArray();
          Req next = w.next(e.requestId(), done.originInputIds(), out);
          if (next != null) {
            queue.add(next);
          }
        }
      }
    }
    double seconds = (System.nanoTime() - start) / 1e9;
    EngineStats s = engine.stats();
    long schedulerNanos = s.schedulerNanos() - before.schedulerNanos();
    long forwardNanos = s.forwardNanos() - before.forwardNanos();
    return new Result(
        submitTime.size(),
        inputTokens,
        outputTokens,
        seconds,
        inputTokens / seconds,
        outputTokens / seconds,
        (inputTokens + outputTokens) / seconds,
        percentile(ttft, 50),
        percentile(ttft, 99),
        percentile(itl, 50),
        percentile(itl, 99),
        inputTokens == 0
            ? 0
            : (double) (s.cacheHitTokens() - before.cacheHitTokens()) / inputTokens,
        s.retractions() - before.retractions(),
        s.prefillTokens() - before.prefillTokens(),
        w.prefillMinimum(),
        (double) schedulerNanos / (schedulerNanos + forwardNanos),
        s.tiers(),
        engine.kvStoreType(),
        s.steps() - before.steps(),
        s.draftTokens() - before.draftTokens(),
        s.acceptedDraftTokens() - before.acceptedDraftTokens(),
        digest(outputs));
  }

  /** A digest of every request's output tokens, whatever order the requests ended in. */
  private static long digest(Map<String, List<Integer>> outputs) {
    long d = 0;
    for (Map.Entry<String, List<Integer>> e : outputs.entrySet()) {
      d += (long) e.getKey().hashCode() * 0x9E3779B97F4A7C15L ^ e.getValue().hashCode();
    }
    return d;
  }

  private static double percentile(List<Double> v, int p) {
    if (v.isEmpty()) {
      return 0;
    }
    double[] a = v.stream().mapToDouble(Double::doubleValue).sorted().toArray();
    return a[Math.min(a.length - 1, (int) Math.ceil(p / 100.0 * a.length) - 1)];
  }

  private int[] randomTokens(Random rnd, int n) {
    return rnd.ints(n, 3, model.config().vocabSize()).toArray();
  }

  /**
   * Requests for the given prompts, each {@code output} tokens long (greedy), ids "p0", "p1", ..
   */
  public Workload prompts(List<int[]> prompts, int output) {
    return prompts(prompts, SamplingParams.GREEDY, output);
  }

  /**
   * Requests for the given prompts, sampled with {@code params}, each {@code output} tokens long at
   * most (a format may end one sooner).
   */
  public Workload prompts(List<int[]> prompts, SamplingParams params, int output) {
    List<Req> reqs = new ArrayList<>();
    for (int i = 0; i < prompts.size(); i++) {
      reqs.add(
          Req.builder("p" + i, prompts.get(i))
              .params(params)
              .maxNewTokens(output)
              .ignoreEos(true)
              .build());
    }
    long minimum = reqs.stream().mapToLong(Req::promptLen).sum();
    return new Workload() {
      public List<Req> initial() {
        return reqs;
      }

      public long prefillMinimum() {
        return minimum;
      }
    };
  }

  /** (a) Independent random prompts of {@code minPrompt..maxPrompt} tokens. */
  public Workload independent(int requests, int minPrompt, int maxPrompt, int output, long seed) {
    Random rnd = new Random(seed);
    List<int[]> prompts = new ArrayList<>();
    for (int i = 0; i < requests; i++) {
      prompts.add(randomTokens(rnd, minPrompt + rnd.nextInt(maxPrompt - minPrompt + 1)));
    }
    return prompts(prompts, output);
  }

  /** (b) Requests whose prompts are one system prompt then their own question. */
  public Workload sharedSystemPrompt(
      int requests, int systemLen, int questionLen, int output, long seed) {
    Random rnd = new Random(seed);
    int[] system = randomTokens(rnd, systemLen);
    List<Req> reqs = new ArrayList<>();
    for (int i = 0; i < requests; i++) {
      int[] p = Arrays.copyOf(system, systemLen + questionLen);
      System.arraycopy(randomTokens(rnd, questionLen), 0, p, systemLen, questionLen);
      reqs.add(Req.builder("b" + i, p).maxNewTokens(output).ignoreEos(true).build());
    }
    return new Workload() {
      public List<Req> initial() {
        return reqs;
      }

      public long prefillMinimum() {
        return systemLen + (long) requests * questionLen;
      }
    };
  }

  /**
   * (c) Chats: each turn's prompt is the conversation so far (prompts and answers) plus a new user
   * message; a turn is sent when the previous one is answered.
   */
  public Workload multiTurn(int conversations, int turns, int messageLen, int output, long seed) {
    Random rnd = new Random(seed);
    List<Req> first = new ArrayList<>();
    for (int c = 0; c < conversations; c++) {
      first.add(
          Req.builder("c" + c + "-t0", randomTokens(rnd, messageLen))
              .maxNewTokens(output)
              .ignoreEos(true)
              .build());
    }
    return new Workload() {
      public List<Req> initial() {
        return first;
      }

      public Req next(String finished, int[] promptIds, int[] outputIds) {
        int dash = finished.lastIndexOf("-t");
        int turn = Integer.parseInt(finished.substring(dash + 2)) + 1;
        if (turn >= turns) {
          return null;
        }
        int[] p = Arrays.copyOf(promptIds, promptIds.length + outputIds.length + messageLen);
        System.arraycopy(outputIds, 0, p, promptIds.length, outputIds.length);
        System.arraycopy(
            randomTokens(rnd, messageLen), 0, p, promptIds.length + outputIds.length, messageLen);
        return Req.builder(finished.substring(0, dash) + "-t" + turn, p)
            .maxNewTokens(output)
            .ignoreEos(true)
            .build();
      }

      public long prefillMinimum() {
        // Each message once, plus each answer's last token, whose K/V decoding never computed.
        return (long) conversations * (turns * messageLen + (turns - 1));
      }
    };
  }
}
