package io.flinfer.runtime.zoo;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinfer.runtime.forward.CpuModelRunner;
import io.flinfer.runtime.generate.BatchGenerator;
import io.flinfer.runtime.model.LlamaModel;
import io.flinfer.runtime.testing.ForwardRuns;
import io.flinfer.runtime.testing.ZooGoldens;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The families' random-weight models against llama.cpp: the last prompt position's logits within
 * the zoo's tolerance for F32/F16 weights (max_rel 1e-3), and the greedy continuation identical
 * until a step where llama.cpp's own top-1 margin is below 0.05 (there either choice is fair).
 */
class ZooFamiliesTest {
  static final double TOLERANCE = 1e-3;
  static final float MARGIN = 0.05f;

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"llama3-tiny", "qwen2-tiny", "qwen3-tiny", "phi3-tiny"})
  void logitsAndGreedyContinuationsMatchLlamaCpp(String name) {
    LlamaModel model = ZooGoldens.model(name);
    List<ZooGoldens.Golden> goldens = ZooGoldens.goldens(name);
    double worst = 0;
    try (BatchGenerator g = new BatchGenerator(model, 1, 512, 1)) {
      for (int p = 0; p < goldens.size(); p++) {
        ZooGoldens.Golden gold = goldens.get(p);
        List<float[]> steps =
            ForwardRuns.alone(model, gold.prompt(), gold.prompt().length, CpuModelRunner::new, 1);
        double rel = ZooGoldens.maxRel(gold.logits(), steps.get(0));
        worst = Math.max(worst, rel);
        assertThat(rel).as("%s p%d max_rel", name, p + 1).isLessThanOrEqualTo(TOLERANCE);

        int[] out = ZooGoldens.greedy(g, gold);
        int diff = ZooGoldens.firstDifference(gold.greedy(), out);
        if (diff >= 0) {
          assertThat(gold.margins()[diff])
              .as("%s p%d greedy differs at step %d where llama.cpp's margin is", name, p + 1, diff)
              .isLessThan(MARGIN);
        }
      }
    }
    System.out.printf("%s: max relative logit difference against llama.cpp %.2e%n", name, worst);
  }

  /**
   * A generation ends at the end-of-sequence token and at the family's end-of-turn and
   * end-of-message tokens, from the metadata or spelled as the family spells them.
   */
  @ParameterizedTest(name = "{0}")
  @org.junit.jupiter.params.provider.CsvSource({
    "llama3-tiny, 128001 128009",
    "qwen3-tiny, 151643 151645",
    "phi3-tiny, 32000 32007"
  })
  void endTokensIncludeTheFamilysEndOfTurn(String name, String ids) {
    int[] expected = java.util.Arrays.stream(ids.split(" ")).mapToInt(Integer::parseInt).toArray();
    assertThat(ZooGoldens.model(name).tokenizer().endTokens()).contains(expected);
  }
}
