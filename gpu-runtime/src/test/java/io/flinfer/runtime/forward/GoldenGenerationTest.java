package io.flinfer.runtime.forward;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinfer.runtime.generate.BatchGenerator;
import io.flinfer.runtime.generate.GenerationRequest;
import io.flinfer.runtime.model.LlamaModel;
import io.flinfer.runtime.sampling.SamplingParams;
import io.flinfer.runtime.testing.SharedFiles;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Greedy generation on stories260K reproduces llama2.c's reference output exactly. */
class GoldenGenerationTest {
  private static final int[] PROMPT_IDS = {1, 403, 407, 261, 378};

  @Test
  void llama2cCheckpointGivesTheGoldenTokensAndText() {
    assertGolden(SharedFiles.stories260k());
  }

  @Test
  void llamaCppConvertedGgufGivesTheGoldenTokens() {
    LlamaModel model = SharedFiles.stories260kGguf();
    // llama.cpp's converter wrote context_length 128, not the true 512: the model is served
    // with the context its file declares, which the 68 golden positions fit.
    assertThat(model.config().contextLength()).isEqualTo(128);
    assertGolden(model);
  }

  private static void assertGolden(LlamaModel model) {
    int[] prompt = model.tokenizer().encode("Once upon a time", true);
    assertThat(prompt).containsExactly(PROMPT_IDS);
    int[] golden = SharedFiles.goldenIds();
    try (BatchGenerator g = new BatchGenerator(model, 1, 512, 1)) {
      int[] out =
          g.generate(
                  List.of(new GenerationRequest(prompt, SamplingParams.GREEDY, 64, true)),
                  (r, i, t, lp) -> {})[0];
      assertThat(out).containsExactly(golden);
      int[] all = new int[prompt.length + 60];
      System.arraycopy(prompt, 0, all, 0, prompt.length);
      System.arraycopy(out, 0, all, prompt.length, 60);
      assertThat(model.tokenizer().decode(all)).isEqualTo(SharedFiles.goldenText(64));
    }
  }
}
