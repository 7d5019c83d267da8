package io.flinfer.runtime.testing;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinfer.runtime.forward.CpuModelRunner;
import io.flinfer.runtime.model.LlamaModel;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * What llama.cpp gave on a random-weight file that a test writes again from its seed, kept in
 * {@code resources/FOLDER} as the zoo's {@code golden.c} writes it: {@code prompts.txt} (token ids,
 * a prompt a line), and per prompt k its last-position logits ({@code NAME.pk.logits.f32}), greedy
 * steps ({@code NAME.pk.greedy}) and each step's top-1 margin ({@code NAME.pk.margin}).
 */
public final class LlamaCppGoldens {
  /** Greedy steps are compared while llama.cpp's top two logits are at least this far apart. */
  public static final float CLEAR_MARGIN = 0.05f;

  private LlamaCppGoldens() {}

  /**
   * The CPU backend's last-position logits within {@code tolerance} (max_rel) of llama.cpp's on
   * every prompt, and its greedy steps llama.cpp's up to the first whose margin is under {@link
   * #CLEAR_MARGIN} (the zoo's rule: where two logits are that close, rounding may pick either, and
   * every later step follows the pick); returns each prompt's max_rel.
   */
  public static double[] assertMatches(
      LlamaModel model, String folder, String name, double tolerance) throws Exception {
    List<int[]> prompts = new ArrayList<>();
    for (String line : text(folder + "/prompts.txt").split("\n")) {
      prompts.add(ZooGoldens.ints(line));
    }
    double[] rels = new double[prompts.size()];
    for (int p = 0; p < prompts.size(); p++) {
      int[] prompt = prompts.get(p);
      String stem = folder + "/" + name + ".p" + (p + 1);
      float[] expected = ZooGoldens.floats32(bytes(stem + ".logits.f32"));
      int[] greedy = ZooGoldens.ints(text(stem + ".greedy"));
      float[] margins = ZooGoldens.floats(text(stem + ".margin"));
      int[] tokens = Arrays.copyOf(prompt, prompt.length + greedy.length - 1);
      System.arraycopy(greedy, 0, tokens, prompt.length, greedy.length - 1);
      List<float[]> steps = ForwardRuns.alone(model, tokens, prompt.length, CpuModelRunner::new, 2);
      rels[p] = ZooGoldens.maxRel(expected, steps.get(0));
      System.out.printf("%s prompt %d: max_rel %.2e against llama.cpp%n", name, p + 1, rels[p]);
      assertThat(rels[p]).as("%s prompt %d", name, p + 1).isLessThan(tolerance);
      for (int i = 0; i < greedy.length && margins[i] >= CLEAR_MARGIN; i++) {
        assertThat(ZooGoldens.argmax(steps.get(i)))
            .as("%s prompt %d, step %d", name, p + 1, i)
            .isEqualTo(greedy[i]);
      }
    }
    return rels;
  }

  private static String text(String resource) throws Exception {
    return new String(bytes(resource), StandardCharsets.UTF_8);
  }

  private static byte[] bytes(String resource) throws Exception {
    try (InputStream in = LlamaCppGoldens.class.getResourceAsStream("/" + resource)) {
      if (in == null) {
        throw new IllegalStateException("no test resource " + resource);
      }
      return in.readAllBytes();
    }
  }
}
