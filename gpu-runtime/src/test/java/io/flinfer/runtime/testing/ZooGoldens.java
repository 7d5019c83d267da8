package io.flinfer.runtime.testing;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.flinfer.runtime.generate.BatchGenerator;
import io.flinfer.runtime.generate.GenerationRequest;
import io.flinfer.runtime.model.LlamaModel;
import io.flinfer.runtime.model.ModelLoader;
import io.flinfer.runtime.sampling.SamplingParams;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;

/**
 * llama.cpp's reference outputs for the zoo's random-weight models ({@code ../shared/golden/zoo}):
 * for each prompt (token ids) the logits at its last position, the 32 greedy ids after it and the
 * top-1 margin at each of those steps.
 */
public final class ZooGoldens {
  private ZooGoldens() {}

  /** One prompt's reference. */
  public record Golden(int[] prompt, float[] logits, int[] greedy, float[] margins) {}

  public static Path modelFile(String name) {
    Path p = SharedFiles.root().resolve("models/zoo/" + name + ".gguf");
    assumeTrue(Files.isRegularFile(p), "zoo model not found: " + p);
    return p;
  }

  public static LlamaModel model(String name) {
    return ModelLoader.load(modelFile(name), null);
  }

  public static List<Golden> goldens(String name) {
    Path dir = SharedFiles.root().resolve("golden/zoo");
    try {
      List<String> prompts = Files.readAllLines(dir.resolve(name + ".prompts.txt"));
      Golden[] out = new Golden[prompts.size()];
      for (int i = 0; i < out.length; i++) {
        String p = name + ".p" + (i + 1);
        out[i] =
            new Golden(
                ints(prompts.get(i)),
                floats32(Files.readAllBytes(dir.resolve(p + ".logits.f32"))),
                ints(Files.readString(dir.resolve(p + ".greedy"))),
                floats(Files.readString(dir.resolve(p + ".margin"))));
      }
      return List.of(out);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The reference prompts alone (token ids), without the outputs. */
  public static List<int[]> prompts(String name) {
    try {
      return Files.readAllLines(SharedFiles.root().resolve("golden/zoo/" + name + ".prompts.txt"))
          .stream()
          .map(ZooGoldens::ints)
          .toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * What a small perturbation moves the model's logits by in llama.cpp itself: the zoo's {@code
   * kv_f16_vs_f32} max_rel for {@code name} ({@code golden/zoo/index.json}).
   */
  public static double perturbationTolerance(String name) {
    try {
      JsonNode index =
          new ObjectMapper().readTree(SharedFiles.root().resolve("golden/zoo/index.json").toFile());
      JsonNode v = index.path("models").path(name).path("observed_differences");
      JsonNode rel = v.path("kv_f16_vs_f32").path("max_rel");
      if (!rel.isNumber()) {
        throw new IllegalStateException("index.json has no kv_f16_vs_f32 max_rel for " + name);
      }
      return rel.asDouble();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The greedy continuation {@code g} generates after {@code gold}'s prompt, as long as its. */
  public static int[] greedy(BatchGenerator g, Golden gold) {
    return g.generate(
            List.of(
                new GenerationRequest(
                    gold.prompt(), SamplingParams.GREEDY, gold.greedy().length, false)),
            (r, i, t, lp) -> {})[0];
  }

  /** The index of the largest value, the lowest on a tie (llama.cpp's greedy choice). */
  public static int argmax(float[] v) {
    int best = 0;
    for (int i = 1; i < v.length; i++) {
      if (v[i] > v[best]) {
        best = i;
      }
    }
    return best;
  }

  /** max |a - b| / max |a|, the zoo's measure. */
  public static double maxRel(float[] reference, float[] actual) {
    double scale = 0;
    double err = 0;
    for (int i = 0; i < reference.length; i++) {
      scale = Math.max(scale, Math.abs(reference[i]));
      err = Math.max(err, Math.abs(reference[i] - actual[i]));
    }
    return err / scale;
  }

  /**
   * The first step where {@code actual} leaves the reference's greedy ids, or -1 if it never does
   * (over the shorter of the two).
   */
  public static int firstDifference(int[] reference, int[] actual) {
    for (int i = 0; i < Math.min(reference.length, actual.length); i++) {
      if (reference[i] != actual[i]) {
        return i;
      }
    }
    return -1;
  }

  /** The ids on a line of a golden file (spaces between). */
  static int[] ints(String line) {
    String t = line.trim();
    return t.isEmpty()
        ? new int[0]
        : Arrays.stream(t.split("\\s+")).mapToInt(Integer::parseInt).toArray();
  }

  /** The numbers on a line of a golden file (spaces between). */
  static float[] floats(String line) {
    String[] parts = line.trim().split("\\s+");
    float[] f = new float[parts.length];
    for (int i = 0; i < f.length; i++) {
      f[i] = Float.parseFloat(parts[i]);
    }
    return f;
  }

  /** Raw little-endian float32 values, as golden.c writes logits. */
  static float[] floats32(byte[] raw) {
    float[] f = new float[raw.length / 4];
    ByteBuffer.wrap(raw).order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer().get(f);
    return f;
  }
}
