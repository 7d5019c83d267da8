package io.flinfer.job.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.flinfer.job.bench.EngineBenchmark;
import io.flinfer.memcache.tier.HiCacheConfig;
import io.flinfer.memcache.tier.WritePolicy;
import io.flinfer.operators.engine.EngineConfig;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * The KV tiers' workload: multi-turn chats served round-robin on a pool an eighth of their working
 * set, so each conversation's prefix has left the pool when it returns. Runs it with the pool alone
 * (L1), with a host tier holding the working set (L2), with a host tier of twice the pool and a
 * storage directory (L2+L3), and on a fresh engine over that directory (L3 after a restart).
 */
final class TierBench {
  private TierBench() {}

  static ObjectNode run(
      ObjectMapper json, EngineBenchmark b, EngineConfig.Builder base, List<Integer> shape) {
    int convs = shape.get(0);
    int turns = shape.get(1);
    int message = shape.get(2);
    int answer = shape.get(3);
    long workingSet = (long) convs * turns * (message + answer);
    int pool = (int) Math.max(4 * (turns * (message + answer)), workingSet / 8);
    base.maxTotalTokens(pool).maxRunningRequests(Math.min(64, convs)).radixCache(true);
    ObjectNode o = json.createObjectNode();
    o.put("conversations", convs);
    o.put("turns", turns);
    o.put("message_tokens", message);
    o.put("answer_tokens", answer);
    o.put("working_set_tokens", workingSet);
    o.put("pool_tokens", pool);
    Path dir;
    try {
      dir = Files.createTempDirectory("flinfer-kv-storage");
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    try {
      EngineBenchmark.Result l1 =
          b.run(base.hiCache(null).build(), b.multiTurn(convs, turns, message, answer, 7));
      put(o, "l1_only", l1, null);
      HiCacheConfig l2 =
          HiCacheConfig.builder()
              .hostTokens((int) (workingSet * 5 / 4))
              .writePolicy(WritePolicy.WRITE_THROUGH)
              .build();
      put(
          o,
          "l2",
          b.run(base.hiCache(l2).build(), b.multiTurn(convs, turns, message, answer, 7)),
          l1);
      HiCacheConfig l3 =
          HiCacheConfig.builder()
              .hostTokens(2 * pool)
              .writePolicy(WritePolicy.WRITE_THROUGH)
              .storageDir(dir)
              .storagePageTokens(16)
              .build();
      put(
          o,
          "l2_l3",
          b.run(base.hiCache(l3).build(), b.multiTurn(convs, turns, message, answer, 7)),
          l1);
      put(
          o,
          "l3_after_restart",
          b.run(base.hiCache(l3).build(), b.multiTurn(convs, turns, message, answer, 7)),
          l1);
    } finally {
      base.hiCache(null);
      try (Stream<Path> files = Files.walk(dir)) {
        for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
          Files.deleteIfExists(p);
        }
      } catch (IOException e) {
        System.err.println("could not delete " + dir + ": " + e);
      }
    }
    return o;
  }

  private static void put(
      ObjectNode o, String name, EngineBenchmark.Result r, EngineBenchmark.Result l1) {
    ObjectNode n = o.putObject(name);
    n.put("prefill_computed", r.prefillComputed());
    n.put("prefill_minimum", r.prefillMinimum());
    n.put(
        "prefill_computed_over_minimum",
        Math.round(100.0 * r.prefillComputed() / r.prefillMinimum()) / 100.0);
    n.put("seconds", Math.round(r.seconds() * 100) / 100.0);
    n.put("total_tokens_per_s", Math.round(r.totalTokensPerS() * 10) / 10.0);
    n.put("ttft_p50_ms", Math.round(r.ttftP50() * 10) / 10.0);
    n.put("cache_hit_rate", Math.round(r.cacheHitRate() * 1000) / 1000.0);
    n.put("retractions", r.retractions());
    if (l1 != null) {
      n.put(
          "total_throughput_over_l1_only",
          Math.round(100.0 * r.totalTokensPerS() / l1.totalTokensPerS()) / 100.0);
    }
    if (r.tiers() != null) {
      n.putPOJO("tiers", r.tiers());
    }
    System.err.printf(
        "  tiers %-18s prefill %d (min %d)  %.1f tok/s  %.1f s%n",
        name, r.prefillComputed(), r.prefillMinimum(), r.totalTokensPerS(), r.seconds());
  }
}
