package io.flinfer.job.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.flinfer.job.bench.KernelBenchmark;
import io.flinfer.runtime.tensor.GgmlType;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Times one weight matrix's products alone, batch by batch and round by round, and prints JSON:
 * GFLOP/s, the weights' bytes read per second, and a checksum of the outputs' bits, which two
 * builds of the same kernels must agree on.
 */
@Command(
    name = "bench-kernel",
    mixinStandardHelpOptions = true,
    description = "Benchmark one matrix product kernel on random weights; prints JSON.")
public final class BenchKernelCommand implements Callable<Integer> {
  @Option(
      names = "--type",
      defaultValue = "f16",
      description = "Weight type: f32, f16, bf16, q8_0, q4_0, q4_k or q6_k (default: f16).")
  String type;

  @Option(
      names = "--rows",
      defaultValue = "4864",
      description = "Rows (outputs) of the matrix (default: ${DEFAULT-VALUE}).")
  int rows;

  @Option(
      names = "--cols",
      defaultValue = "896",
      description = "Columns (inputs) of the matrix (default: ${DEFAULT-VALUE}).")
  int cols;

  @Option(
      names = "--tokens",
      split = ",",
      defaultValue = "1,8,32",
      description = "Tokens per product, one measurement each (default: 1,8,32).")
  List<Integer> tokens;

  @Option(names = "--threads", description = "Worker threads (default: all cores).")
  int threads = Runtime.getRuntime().availableProcessors();

  @Option(
      names = "--seconds",
      defaultValue = "2",
      description = "Least time per measurement (default: ${DEFAULT-VALUE}).")
  double seconds;

  @Option(
      names = "--rounds",
      defaultValue = "3",
      description = "Measurements per batch size, after one warm-up (default: ${DEFAULT-VALUE}).")
  int rounds;

  @Override
  public Integer call() throws Exception {
    GgmlType t = GgmlType.valueOf(type.toUpperCase(Locale.ROOT));
    if (rows < 4 || cols < 32 || rounds < 1 || seconds <= 0 || threads < 1) {
      throw new IllegalArgumentException(
          "need rows >= 4, cols >= 32, rounds >= 1, seconds > 0 and threads >= 1");
    }
    ObjectMapper json = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
    ObjectNode root = json.createObjectNode();
    root.put("threads", threads);
    BenchModelCommand.machine(root);
    root.put("load_average_before", BenchModelCommand.loadAverage());
    root.put("type", t.name());
    root.put("rows", rows);
    root.put("cols", cols);
    ArrayNode results = root.putArray("results");
    try (KernelBenchmark bench = new KernelBenchmark(t, rows, cols, threads, 17)) {
      root.put("weight_bytes", bench.matrix().byteSize());
      for (int n : tokens) {
        if (n < 1) {
          throw new IllegalArgumentException("tokens must be at least 1: " + n);
        }
        bench.run(n, Math.min(seconds, 1), 5); // warm-up: compiled kernels before timing
        for (int r = 0; r < rounds; r++) {
          KernelBenchmark.Measurement m = bench.run(n, seconds, 5);
          double flops = 2.0 * rows * cols * n * m.callsPerSecond();
          ObjectNode row = results.addObject();
          row.put("tokens", n);
          row.put("round", r + 1);
          row.put("gflop_per_s", significant(flops / 1e9));
          row.put(
              "weight_gb_per_s", significant(bench.matrix().byteSize() * m.callsPerSecond() / 1e9));
          row.put("output_bits_checksum", Long.toHexString(m.outputBits()));
          System.err.printf(
              "  %s %d x %d, %d tokens, round %d: %.1f GFLOP/s%n",
              t, rows, cols, n, r + 1, flops / 1e9);
        }
      }
    }
    root.put("load_average_after", BenchModelCommand.loadAverage());
    System.out.println(json.writeValueAsString(root));
    return 0;
  }

  /** Four significant digits. */
  private static double significant(double v) {
    return new java.math.BigDecimal(v).round(new java.math.MathContext(4)).doubleValue();
  }
}
