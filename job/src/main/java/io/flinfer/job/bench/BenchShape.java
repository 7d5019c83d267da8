package io.flinfer.job.bench;

import io.flinfer.runtime.gguf.RandomGgufModel;
import io.flinfer.runtime.gguf.WeightTypes;
import io.flinfer.runtime.model.GatedActivation;
import io.flinfer.runtime.model.LlamaModel;
import io.flinfer.runtime.model.ModelConfig;
import io.flinfer.runtime.model.ModelLoader;
import io.flinfer.runtime.model.RopeConfig;
import io.flinfer.runtime.model.SlidingWindow;
import io.flinfer.runtime.tensor.GgmlType;
import java.io.IOException;
import java.nio.file.Path;

/**
 * The shapes of real models that benchmarks write with random weights (the trained weights are not
 * at hand): each a GGUF file in a chosen tensor type, written once under the bench folder.
 */
public enum BenchShape {
  /** Llama 2 110M (the largest llama2.c TinyStories model), 32k vocabulary. */
  LLAMA_110M("llama-110m", ModelConfig.llama110M(), true),
  /** Llama 3.2 1B: GQA 32/8, 128k vocabulary, tied embeddings. */
  LLAMA_1B(
      "llama-1b",
      new ModelConfig(
          "llama",
          2048,
          8192,
          16,
          32,
          8,
          64,
          128256,
          8192,
          1e-5f,
          RopeConfig.normal(500000f),
          false,
          false),
      true),
  /** Llama 3.1 8B: GQA 32/8, 128k vocabulary. */
  LLAMA_8B(
      "llama-8b",
      new ModelConfig(
          "llama",
          4096,
          14336,
          32,
          32,
          8,
          128,
          128256,
          8192,
          1e-5f,
          RopeConfig.normal(500000f),
          false,
          false),
      false),
  /** Qwen2.5 0.5B: GQA 14/2, q/k/v biases, NEOX rope, 152k vocabulary, tied embeddings. */
  QWEN25_05B(
      "qwen2.5-0.5b",
      new ModelConfig(
          "qwen2",
          896,
          4864,
          24,
          14,
          2,
          64,
          151936,
          8192,
          1e-6f,
          new RopeConfig(RopeConfig.Style.NEOX, 1000000f, null),
          true,
          false),
      true),
  /**
   * Gemma 3 1B: MQA 4/1 with heads of 256, q/k norms, GeGLU, post norms, five of every six layers
   * windowed (512 positions, rope base 10,000), 262k vocabulary, tied embeddings.
   */
  GEMMA3_1B(
      "gemma3-1b",
      new ModelConfig(
          "gemma3",
          1152,
          6912,
          26,
          4,
          1,
          256,
          262144,
          32768,
          1e-6f,
          new RopeConfig(RopeConfig.Style.NEOX, 1000000f, null),
          false,
          true,
          (float) Math.sqrt(1152),
          GatedActivation.GELU_TANH,
          true,
          new SlidingWindow(512, 6, new RopeConfig(RopeConfig.Style.NEOX, 10000f, null)),
          null,
          null),
      true);

  private final String id;
  private final ModelConfig config;
  private final boolean tied;

  BenchShape(String id, ModelConfig config, boolean tied) {
    this.id = id;
    this.config = config;
    this.tied = tied;
  }

  public String id() {
    return id;
  }

  public ModelConfig config() {
    return config;
  }

  /** The shape named {@code id}, or null. */
  public static BenchShape byId(String id) {
    for (BenchShape s : values()) {
      if (s.id.equals(id)) {
        return s;
      }
    }
    return null;
  }

  /** The default bench folder: {@code ~/.cache/flinfer/bench}. */
  public static Path defaultDir() {
    return Path.of(System.getProperty("user.home"), ".cache", "flinfer", "bench");
  }

  /** Writes (once) and loads this shape with random weights of {@code type}. */
  public LlamaModel load(GgmlType type, Path dir) throws IOException {
    return load(WeightTypes.uniform(type), dir);
  }

  /** Writes (once) and loads this shape with random weights, each matrix in its type. */
  public LlamaModel load(WeightTypes types, Path dir) throws IOException {
    return ModelLoader.load(write(types, dir), null);
  }

  /** Writes (once) this shape with random weights of {@code types}; returns the file. */
  public Path write(WeightTypes types, Path dir) throws IOException {
    Path file =
        (dir != null ? dir : defaultDir()).resolve(id + "-random-" + types.name() + ".gguf");
    System.err.println("random-weight model at " + file);
    return RandomGgufModel.write(config, types, tied, 1234, file);
  }
}
