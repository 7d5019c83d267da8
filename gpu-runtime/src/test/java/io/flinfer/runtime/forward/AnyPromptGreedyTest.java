package io.flinfer.runtime.forward;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinfer.runtime.generate.BatchGenerator;
import io.flinfer.runtime.generate.GenerationRequest;
import io.flinfer.runtime.model.LlamaModel;
import io.flinfer.runtime.sampling.SamplingParams;
import io.flinfer.runtime.testing.SharedFiles;
import io.flinfer.runtime.testing.ZooGoldens;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * For any prompt, greedy generation (here several prompts batched together) picks the tokens that
 * the scalar reference forward pass picks for that prompt alone.
 */
class AnyPromptGreedyTest {
  private static final String[] PROMPTS = {
    "Lily and Ben",
    "The cat sat",
    "Once upon a time, there was a dog",
    "Tom had a red ball. He",
    "Sue"
  };

  @Test
  void batchedGreedyMatchesTheReferenceForEveryPrompt() {
    LlamaModel model = SharedFiles.stories260k();
    List<GenerationRequest> requests = new ArrayList<>();
    for (String p : PROMPTS) {
      requests.add(
          new GenerationRequest(
              model.tokenizer().encode(p, true), SamplingParams.GREEDY, 40, false));
    }
    int[][] batched;
    try (BatchGenerator g = new BatchGenerator(model, PROMPTS.length, 512, 2)) {
      batched = g.generate(requests, (r, i, t, lp) -> {});
    }
    for (int r = 0; r < PROMPTS.length; r++) {
      ReferenceForward ref = new ReferenceForward(model);
      int[] prompt = requests.get(r).promptIds();
      float[] logits = null;
      for (int t : prompt) {
        logits = ref.next(t);
      }
      int[] expected = new int[40];
      for (int i = 0; i < 40; i++) {
        expected[i] = ZooGoldens.argmax(logits);
        logits = ref.next(expected[i]);
      }
      assertThat(batched[r]).as("prompt '%s'", PROMPTS[r]).containsExactly(expected);
    }
  }
}
