package io.flinfer.job.cli;

import io.flinfer.job.eval.Perplexity;
import io.flinfer.job.model.ModelLocator;
import io.flinfer.operators.engine.EngineConfig;
import io.flinfer.runtime.model.LlamaModel;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * A model's perplexity on a text file, measured as {@code llama-perplexity} measures it, so the two
 * compare figure for figure: the running estimate after each window and the final one with its
 * error, then the time and the evaluated tokens a second.
 */
@Command(
    name = "perplexity",
    mixinStandardHelpOptions = true,
    description =
        "A model's perplexity on a text file, as llama.cpp's llama-perplexity measures it: windows"
            + " of --ctx tokens, each one's second half scored.")
public final class PerplexityCommand implements Callable<Integer> {
  @Mixin ModelOptions modelOptions = new ModelOptions();

  @Option(names = "--file", required = true, description = "The text (UTF-8).")
  Path file;

  @Option(
      names = "--ctx",
      defaultValue = "512",
      description = "Tokens a window (llama-perplexity's -c) (default: ${DEFAULT-VALUE}).")
  int ctx;

  @Option(
      names = "--chunks",
      defaultValue = "0",
      description = "The most windows to score (llama-perplexity's --chunks); 0: all.")
  int chunks;

  @Option(
      names = "--parallel",
      defaultValue = "4",
      description = "Windows the engine runs at once (default: ${DEFAULT-VALUE}).")
  int parallel;

  @Option(names = "--threads", description = "Worker threads (default: all cores).")
  Integer threads;

  @Override
  public Integer call() throws IOException {
    ModelLocator.Location where = modelOptions.locate();
    LlamaModel model = where.load();
    String text = Files.readString(file, StandardCharsets.UTF_8);
    int[] tokens = model.tokenizer().encode(text, model.tokenizer().addBos());
    if (parallel < 1) {
      throw new IllegalArgumentException("--parallel must be at least 1");
    }
    EngineConfig config =
        EngineConfig.builder()
            .maxRunningRequests(parallel)
            .maxTotalTokens(parallel * (ctx + 1) + 16)
            .radixCache(false)
            .chunkedPrefillSize(Math.max(ctx, 512))
            .maxPrefillTokens(parallel * ctx)
            .threads(threads != null ? threads : Runtime.getRuntime().availableProcessors())
            .build();
    PrintStream err = System.err;
    err.printf(
        "model %s (%s), %d tokens, windows of %d%n",
        where.model(), model.config(), tokens.length, ctx);
    Perplexity.Result r = Perplexity.measure(model, tokens, ctx, chunks, config);
    PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
    StringBuilder line = new StringBuilder();
    for (int w = 0; w < r.running().length; w++) {
      line.append(String.format(Locale.ROOT, "[%d]%.4f,", w + 1, r.running()[w]));
    }
    out.println(line);
    out.printf(Locale.ROOT, "Final estimate: PPL = %.4f +/- %.5f%n", r.ppl(), r.plusMinus());
    err.printf(
        Locale.ROOT,
        "%d windows, %d tokens scored; %.2f s, %.1f tokens/s evaluated%n",
        r.windows(),
        r.scored(),
        r.seconds(),
        (double) r.windows() * ctx / r.seconds());
    return 0;
  }
}
