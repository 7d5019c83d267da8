package io.flinfer.job.cli;

import io.flinfer.job.model.ModelLocator;
import java.nio.file.Path;
import picocli.CommandLine.Option;

/** The options that choose a model, shared by subcommands. */
final class ModelOptions {
  @Option(
      names = "--model",
      paramLabel = "PATH",
      description =
          "Model file (llama2.c .bin or .gguf) or a folder holding one. Default: $FLINFER_MODEL, ../shared/models/stories260K, ~/.cache/flinfer/.")
  Path model;

  @Option(
      names = "--tokenizer",
      paramLabel = "PATH",
      description = "Tokenizer of a llama2.c checkpoint (default: tok*.bin beside it).")
  Path tokenizer;

  ModelLocator.Location locate() {
    return ModelLocator.system().locate(model, tokenizer);
  }
}
