package io.flinfer.job.model;

import io.flinfer.runtime.model.LlamaModel;
import io.flinfer.runtime.model.ModelLoader;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Finds the model to serve, in order: an explicit path, the {@code FLINFER_MODEL} environment
 * variable, {@code ../shared/models/stories260K} beside the working directory or the repository,
 * then {@code ~/.cache/flinfer/}. A path may name a model file or a folder holding one (a llama2.c
 * checkpoint with its tokenizer, or a GGUF file).
 */
public final class ModelLocator {
  public static final String ENV = "FLINFER_MODEL";

  static final String HOW_TO_GET_ONE =
      "No model found. Looked at --model, $"
          + ENV
          + ", ../shared/models/stories260K and ~/.cache/flinfer/.\n"
          + "Put the stories260K test model at ~/.cache/flinfer/stories260K/stories260K.bin with its tokenizer\n"
          + "~/.cache/flinfer/stories260K/tok512.bin. They are public (MIT) at\n"
          + "  https://huggingface.co/karpathy/tinyllamas/resolve/main/stories260K/stories260K.bin\n"
          + "  https://huggingface.co/karpathy/tinyllamas/resolve/main/stories260K/tok512.bin\n"
          + "or pass --model PATH (a llama2.c checkpoint or a GGUF file, or a folder holding one).";

  /** A model file and, for llama2.c checkpoints, its tokenizer. */
  public record Location(Path model, Path tokenizer) {
    public LlamaModel load() {
      return ModelLoader.load(model, tokenizer);
    }
  }

  private final Map<String, String> env;
  private final Path workingDir;
  private final Path home;

  public ModelLocator(Map<String, String> env, Path workingDir, Path home) {
    this.env = env;
    this.workingDir = workingDir;
    this.home = home;
  }

  public static ModelLocator system() {
    return new ModelLocator(
        System.getenv(), Path.of("").toAbsolutePath(), Path.of(System.getProperty("user.home")));
  }

  /**
   * @param explicitModel --model, or null
   * @param explicitTokenizer --tokenizer, or null
   * @throws IllegalArgumentException with instructions when no model is found
   */
  public Location locate(Path explicitModel, Path explicitTokenizer) {
    if (explicitModel != null) {
      return resolve(explicitModel, explicitTokenizer)
          .orElseThrow(
              () ->
                  new IllegalArgumentException(
                      "--model "
                          + explicitModel
                          + ": no model file there (a llama2.c .bin with its tokenizer, or a .gguf)"));
    }
    String fromEnv = env.get(ENV);
    if (fromEnv != null && !fromEnv.isBlank()) {
      return resolve(Path.of(fromEnv), explicitTokenizer)
          .orElseThrow(
              () ->
                  new IllegalArgumentException(
                      "$" + ENV + "=" + fromEnv + ": no model file there"));
    }
    for (Path candidate :
        List.of(
            workingDir.resolve("../shared/models/stories260K"),
            workingDir.resolve("../../shared/models/stories260K"),
            home.resolve(".cache/flinfer/stories260K"),
            home.resolve(".cache/flinfer"))) {
      Optional<Location> found = resolve(candidate.normalize(), explicitTokenizer);
      if (found.isPresent()) {
        return found.get();
      }
    }
    throw new IllegalArgumentException(HOW_TO_GET_ONE);
  }

  private static Optional<Location> resolve(Path path, Path tokenizer) {
    if (Files.isRegularFile(path)) {
      Path tok =
          tokenizer != null
              ? tokenizer
              : ModelLoader.isGguf(path) ? null : tokenizerBeside(path).orElse(null);
      return Optional.of(new Location(path, tok));
    }
    if (!Files.isDirectory(path)) {
      return Optional.empty();
    }
    List<Path> files;
    try (Stream<Path> s = Files.list(path)) {
      files = s.filter(Files::isRegularFile).sorted().collect(Collectors.toList());
    } catch (IOException e) {
      return Optional.empty();
    }
    // Prefer a llama2.c checkpoint with its tokenizer, then a GGUF file.
    for (Path f : files) {
      String name = f.getFileName().toString();
      if (name.endsWith(".bin") && !isTokenizerName(name)) {
        Optional<Path> tok = tokenizer != null ? Optional.of(tokenizer) : tokenizerBeside(f);
        if (tok.isPresent()) {
          return Optional.of(new Location(f, tok.get()));
        }
      }
    }
    return files.stream()
        .filter(f -> f.getFileName().toString().endsWith(".gguf"))
        .findFirst()
        .map(f -> new Location(f, null));
  }

  private static boolean isTokenizerName(String name) {
    return name.startsWith("tok");
  }

  private static Optional<Path> tokenizerBeside(Path model) {
    Path dir = model.toAbsolutePath().getParent();
    try (Stream<Path> s = Files.list(dir)) {
      return s.filter(
              p ->
                  isTokenizerName(p.getFileName().toString())
                      && p.getFileName().toString().endsWith(".bin"))
          .sorted()
          .findFirst();
    } catch (IOException e) {
      return Optional.empty();
    }
  }
}
