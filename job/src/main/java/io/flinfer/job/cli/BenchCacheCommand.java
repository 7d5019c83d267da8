package io.flinfer.job.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.flinfer.job.bench.RadixCacheBenchmark;
import java.util.Collection;
import java.util.concurrent.Callable;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.format.OutputFormatFactory;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;
import org.openjdk.jmh.runner.options.VerboseMode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Runs the radix cache JMH benchmark and prints JSON: ns per matched token, ns per inserted token
 * and evictions per second, for page sizes 1 and 16.
 */
@Command(
    name = "bench-cache",
    mixinStandardHelpOptions = true,
    description = "Benchmark the radix prefix cache (JMH); prints JSON.")
public final class BenchCacheCommand implements Callable<Integer> {
  @Option(
      names = "--iterations",
      defaultValue = "3",
      description = "Measured iterations per benchmark (default: ${DEFAULT-VALUE}).")
  int iterations;

  @Option(
      names = "--seconds",
      defaultValue = "2",
      description = "Seconds per iteration (default: ${DEFAULT-VALUE}).")
  int seconds;

  @Override
  public Integer call() throws Exception {
    Options opts =
        new OptionsBuilder()
            .include(RadixCacheBenchmark.class.getName())
            .forks(1)
            .warmupIterations(2)
            .warmupTime(TimeValue.seconds(1))
            .measurementIterations(iterations)
            .measurementTime(TimeValue.seconds(seconds))
            .jvmArgsAppend("-Xmx6g")
            .build();
    // JMH's own report goes to stderr so that stdout is the JSON alone.
    Collection<RunResult> results =
        new Runner(opts, OutputFormatFactory.createFormatInstance(System.err, VerboseMode.NORMAL))
            .run();
    ObjectMapper json = new ObjectMapper();
    ObjectNode root = json.createObjectNode();
    root.put(
        "workload",
        RadixCacheBenchmark.REQUESTS
            + " requests over 20 system prompts of 1000-2000 tokens, 50-200 token tails");
    ArrayNode rows = root.putArray("results");
    for (RunResult r : results) {
      String name = r.getParams().getBenchmark().replaceAll(".*\\.", "");
      ObjectNode row = rows.addObject();
      row.put("benchmark", name);
      row.put("page_size", Integer.parseInt(r.getParams().getParam("pageSize")));
      row.put("calls_per_s", round(r.getPrimaryResult().getScore()));
      switch (name) {
        case "matchPrefix":
          row.put("ns_per_matched_token", round(1e9 / score(r, "matchedTokens")));
          break;
        case "insert":
          row.put("ns_per_inserted_token", round(1e9 / score(r, "insertedTokens")));
          break;
        default:
          row.put("evictions_per_s", round(score(r, "evictions")));
          row.put("evicted_tokens_per_s", round(score(r, "evictedTokens")));
      }
    }
    System.out.println(json.writerWithDefaultPrettyPrinter().writeValueAsString(root));
    return 0;
  }

  private static double score(RunResult r, String counter) {
    Result<?> res = r.getSecondaryResults().get(counter);
    return res == null ? Double.NaN : res.getScore();
  }

  private static double round(double v) {
    return Math.round(v * 100) / 100.0;
  }
}
