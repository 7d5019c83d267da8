package io.flinfer.runtime.zoo;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinfer.runtime.forward.CpuModelRunner;
import io.flinfer.runtime.generate.BatchGenerator;
import io.flinfer.runtime.gguf.GgufFile;
import io.flinfer.runtime.kernel.ActivationRounding;
import io.flinfer.runtime.model.LlamaModel;
import io.flinfer.runtime.tensor.GgmlType;
import io.flinfer.runtime.tensor.WeightMatrix;
import io.flinfer.runtime.testing.ForwardRuns;
import io.flinfer.runtime.testing.ZooGoldens;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Quantized files as llama-quantize wrote them load and compute what llama.cpp computes. Their
 * products round the activations as ggml does (8 bits a block), so the logits follow llama.cpp's to
 * float rounding until a rounding of an activation falls the other way, as any perturbation makes
 * it do: the zoo measured what one does (its K/V cache in fp16 instead of f32, {@code
 * kv_f16_vs_f32} in {@code index.json}), and that is the tolerance here.
 */
class ZooQuantTest {
  /** The zoo's quantized models. */
  static Stream<String> models() {
    return Stream.of(
        "llama-q-Q8_0", "llama-q-Q4_0", "llama-q-Q4_K_M", "llama-q-Q5_K_M", "llama-q-Q6_K");
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("models")
  void logitsAgreeWithLlamaCpp(String name) {
    double tolerance = ZooGoldens.perturbationTolerance(name);
    double worst = 0;
    for (Comparison c : compare(ZooGoldens.model(name), name, "")) {
      worst = Math.max(worst, c.rel());
      assertThat(c.rel()).as("%s p%d max_rel", name, c.prompt()).isLessThan(tolerance);
      assertThat(c.argmax()).as("%s p%d argmax", name, c.prompt()).isEqualTo(c.goldenArgmax());
      assertThat(c.overlap())
          .as("%s p%d top-10 overlap", name, c.prompt())
          .isGreaterThanOrEqualTo(8);
    }
    System.out.printf(
        "%s: max relative logit difference against llama.cpp %.2e (tolerance %.2e)%n",
        name, worst, tolerance);
  }

  /**
   * Greedy continuations are llama.cpp's until a step where its own top-1 margin is within what a
   * flipped rounding moves a logit (the tolerance times the prompt's largest logit): there either
   * choice is fair.
   */
  @ParameterizedTest(name = "{0}")
  @MethodSource("models")
  void greedyContinuationsFollowLlamaCpp(String name) {
    LlamaModel model = ZooGoldens.model(name);
    double tolerance = ZooGoldens.perturbationTolerance(name);
    List<ZooGoldens.Golden> goldens = ZooGoldens.goldens(name);
    try (BatchGenerator g = new BatchGenerator(model, 1, 512, 1)) {
      for (int p = 0; p < goldens.size(); p++) {
        ZooGoldens.Golden gold = goldens.get(p);
        int[] out = ZooGoldens.greedy(g, gold);
        int diff = ZooGoldens.firstDifference(gold.greedy(), out);
        float reach = (float) (tolerance * maxAbs(gold.logits()));
        System.out.printf(
            "%s p%d greedy: %s%n",
            name,
            p + 1,
            diff < 0
                ? "all " + gold.greedy().length + " steps equal"
                : "first difference at step " + diff + ", margin " + gold.margins()[diff]);
        if (diff >= 0) {
          assertThat(gold.margins()[diff])
              .as("%s p%d greedy differs at step %d where llama.cpp's margin is", name, p + 1, diff)
              .isLessThan(reach);
        }
      }
    }
  }

  /**
   * With {@code -Dflinfer.activations=f32} the products take the activations unrounded: only the
   * likeliest tokens agree (the goldens observe 3e-2..2.5e-1 max_rel for any such kernel).
   */
  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"llama-q-Q8_0", "llama-q-Q4_K_M"})
  void unroundedActivationsAgreeOnTheLikeliestTokensOnly(String name) {
    LlamaModel model;
    System.setProperty(ActivationRounding.PROPERTY, "f32");
    try {
      model = ZooGoldens.model(name);
    } finally {
      System.clearProperty(ActivationRounding.PROPERTY);
    }
    for (Comparison c : compare(model, name, " f32 activations")) {
      assertThat(c.rel()).as("%s p%d max_rel", name, c.prompt()).isLessThan(0.3);
      assertThat(c.overlap())
          .as("%s p%d top-10 overlap", name, c.prompt())
          .isGreaterThanOrEqualTo(5);
    }
  }

  private static double maxAbs(float[] v) {
    double m = 0;
    for (float f : v) {
      m = Math.max(m, Math.abs(f));
    }
    return m;
  }

  /** Prompt {@code prompt} (from 1) of a model against llama.cpp's logits. */
  record Comparison(int prompt, double rel, int argmax, int goldenArgmax, int overlap) {}

  /** Each golden prompt of {@code name} run through {@code model} alone, compared and printed. */
  static List<Comparison> compare(LlamaModel model, String name, String label) {
    List<ZooGoldens.Golden> goldens = ZooGoldens.goldens(name);
    List<Comparison> out = new java.util.ArrayList<>();
    for (int p = 0; p < goldens.size(); p++) {
      ZooGoldens.Golden gold = goldens.get(p);
      float[] logits =
          ForwardRuns.alone(model, gold.prompt(), gold.prompt().length, CpuModelRunner::new, 1)
              .get(0);
      Comparison c =
          new Comparison(
              p + 1,
              ZooGoldens.maxRel(gold.logits(), logits),
              argmax(logits),
              argmax(gold.logits()),
              overlap(top(gold.logits(), 10), top(logits, 10)));
      System.out.printf(
          "%s%s p%d max_rel %.3e argmax %d/%d top10 overlap %d%n",
          name, label, c.prompt(), c.rel(), c.argmax(), c.goldenArgmax(), c.overlap());
      out.add(c);
    }
    return out;
  }

  /**
   * With 8-bit activations (-Dflinfer.kquant.activations=q8) the K-quant matrices multiply as
   * ggml's do, so the logits follow llama.cpp's closely, where float activations only agree on the
   * likeliest tokens. (Files whose other matrices are Q8_0 or F32 keep those in floats.)
   */
  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"llama-q-Q4_K_M", "llama-q-Q5_K_M", "llama-q-Q6_K"})
  void eightBitActivationsFollowLlamaCpp(String name) {
    LlamaModel model;
    System.setProperty("flinfer.kquant.activations", "q8");
    try {
      model = ZooGoldens.model(name);
    } finally {
      System.clearProperty("flinfer.kquant.activations");
    }
    for (Comparison c : compare(model, name, " q8 activations")) {
      // The first prompt (6 tokens) agrees to float rounding; longer ones drift as a rounding
      // flips here and there (the goldens see 2e-2..1.4e-1 from F16 K/V alone).
      assertThat(c.rel())
          .as("%s p%d max_rel", name, c.prompt())
          .isLessThan(c.prompt() == 1 ? 1e-5 : 0.06);
      assertThat(c.argmax()).as("%s p%d argmax", name, c.prompt()).isEqualTo(c.goldenArgmax());
      assertThat(c.overlap())
          .as("%s p%d top-10 overlap", name, c.prompt())
          .isGreaterThanOrEqualTo(8);
    }
  }

  /**
   * Each format decodes {@code blk.0.attn_q.weight} to the unquantized base model's weights within
   * its quantization error. The base file is not shipped; its first 8 rows were drawn as the zoo's
   * {@code make_models.py} draws them (numpy {@code default_rng(6006)}: token_embd 32000 x 256 at
   * std 0.5, 256 norm weights, then attn_q at std 2/16) into a test resource. A mistake in a block
   * layout (a swapped nibble, a scale taken for a min) would err by the size of the weights.
   */
  @ParameterizedTest(name = "{0}")
  @ValueSource(
      strings = {
        "llama-q-Q8_0:0.007",
        "llama-q-Q6_K:0.025",
        "llama-q-Q5_K_M:0.05",
        "llama-q-Q4_K_M:0.1",
        "llama-q-Q4_0:0.12"
      })
  void weightsDecodeToTheBaseWeightsWithinQuantizationError(String spec) throws Exception {
    String name = spec.split(":")[0];
    double bound = Double.parseDouble(spec.split(":")[1]);
    float[] base = new float[8 * 256];
    try (InputStream in =
        ZooQuantTest.class.getResourceAsStream("/zoo/llama-q-base.attn_q0.rows0-7.f32")) {
      ByteBuffer.wrap(in.readAllBytes()).order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer().get(base);
    }
    GgufFile quant = GgufFile.open(ZooGoldens.modelFile(name));
    GgufFile.TensorInfo t = quant.tensors().get("blk.0.attn_q.weight");
    WeightMatrix q = WeightMatrix.of(GgmlType.byId(t.typeId()), quant.map(t), 256, 256);
    double err = 0;
    double norm = 0;
    float[] row = new float[256];
    for (int r = 0; r < 8; r++) {
      q.decodeRow(r, row, 0);
      for (int i = 0; i < 256; i++) {
        double d = row[i] - base[r * 256 + i];
        err += d * d;
        norm += base[r * 256 + i] * (double) base[r * 256 + i];
      }
    }
    double rel = Math.sqrt(err / norm);
    System.out.printf("%s attn_q (%s): relative rms error %.4f%n", name, q.type(), rel);
    assertThat(rel).as("%s (%s) relative rms error", name, q.type()).isLessThan(bound);
  }

  static int argmax(float[] v) {
    int best = 0;
    for (int i = 1; i < v.length; i++) {
      if (v[i] > v[best]) {
        best = i;
      }
    }
    return best;
  }

  static int[] top(float[] v, int k) {
    int[] idx = new int[k];
    boolean[] taken = new boolean[v.length];
    for (int j = 0; j < k; j++) {
      int best = -1;
      for (int i = 0; i < v.length; i++) {
        if (!taken[i] && (best < 0 || v[i] > v[best])) {
          best = i;
        }
      }
      taken[best] = true;
      idx[j] = best;
    }
    return idx;
  }

  static int overlap(int[] a, int[] b) {
    int n = 0;
    for (int x : a) {
      for (int y : b) {
        n += x == y ? 1 : 0;
      }
    }
    return n;
  }
}
