package io.flinfer.runtime.sampling;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinfer.runtime.generate.BatchGenerator;
import io.flinfer.runtime.generate.GenerationRequest;
import io.flinfer.runtime.grammar.OutputConstraint;
import io.flinfer.runtime.grammar.ResponseFormat;
import io.flinfer.runtime.model.LlamaModel;
import io.flinfer.runtime.testing.TinyRandomModel;
import io.flinfer.runtime.tokenizer.SyntheticVocabulary;
import io.flinfer.runtime.tokenizer.Tokenizer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TokenMasksTest {
  private static boolean allows(long[] mask, int t) {
    return (mask[t >>> 6] & 1L << t) != 0;
  }

  /**
   * A model with more rows (310) than its tokenizer has entries (300): below min_tokens every row
   * but the end and stop tokens, nothing past the rows; with a format, only the format's tokens.
   */
  @Test
  void belowMinTokensEveryRowButTheEndingOnes() {
    Tokenizer tok = SyntheticVocabulary.of(300);
    TokenMasks masks = new TokenMasks(tok, 310);
    int[] ends = {2};
    int[] stops = {50};
    assertThat(masks.allowed(SamplingParams.GREEDY, null, null, 0, ends, stops)).isNull();
    SamplingParams min3 = SamplingParams.builder().minTokens(3).build();
    assertThat(masks.allowed(min3, null, null, 3, ends, stops)).isNull();
    long[] m = masks.allowed(min3, null, null, 2, ends, stops);
    List<Integer> out = new ArrayList<>();
    for (int t = 0; t < m.length * 64; t++) {
      if (!allows(m, t)) {
        out.add(t);
      }
    }
    List<Integer> expected = new ArrayList<>(List.of(2, 50));
    for (int t = 310; t < m.length * 64; t++) {
      expected.add(t);
    }
    assertThat(out).isEqualTo(expected);

    SamplingParams json = min3.toBuilder().responseFormat(ResponseFormat.JSON_OBJECT).build();
    OutputConstraint c = masks.constraint(json);
    m = masks.allowed(json, c, null, 0, ends, stops);
    int brace = tok.encode("{", false)[0];
    assertThat(allows(m, brace)).isTrue();
    assertThat(allows(m, 2)).isFalse();
    assertThat(allows(m, 305)).isFalse(); // a row without text
    assertThat(TokenMasks.isEmpty(m)).isFalse();
  }

  /**
   * A regular expression's output may end where it matches: its end and stop tokens are allowed
   * there (from min_tokens on), and nowhere else.
   */
  @Test
  void aMatchMayEndWhereItMatches() {
    Tokenizer tok = SyntheticVocabulary.of(300);
    TokenMasks masks = new TokenMasks(tok, 300);
    int[] ends = {2};
    int[] stops = {50};
    int a = 3 + 'a'; // the byte token of "a"
    SamplingParams p =
        SamplingParams.builder().responseFormat(ResponseFormat.REGEX).regex("a+").build();
    OutputConstraint c = masks.constraint(p);
    long[] m = masks.allowed(p, c, null, 0, ends, stops);
    assertThat(allows(m, a)).isTrue();
    assertThat(allows(m, 2) || allows(m, 50)).as("nothing matched yet").isFalse();
    assertThat(c.advance(a)).isTrue();
    m = masks.allowed(p, c, null, 1, ends, stops);
    assertThat(allows(m, a) && allows(m, 2) && allows(m, 50)).isTrue();
    SamplingParams atLeast3 = p.toBuilder().minTokens(3).build();
    m = masks.allowed(atLeast3, c, null, 1, ends, stops);
    assertThat(allows(m, a)).isTrue();
    assertThat(allows(m, 2) || allows(m, 50)).as("below min_tokens").isFalse();
  }

  /**
   * The generator honours min_tokens: with EOS made likely (+5), requests end within a few tokens;
   * with min_tokens 30, none chooses EOS among its first 30.
   */
  @Test
  void theGeneratorHoldsOffTheEndUntilMinTokens(@TempDir Path dir) throws Exception {
    LlamaModel random = TinyRandomModel.write(dir, 13);
    int eos = random.tokenizer().eosId();
    int[] prompt = random.tokenizer().encode("Hi", true);
    List<GenerationRequest> reqs = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      SamplingParams.Builder p =
          SamplingParams.builder()
              .temperature(1f)
              .seed(i)
              .logitBias(new int[] {eos}, new float[] {5f});
      reqs.add(new GenerationRequest(prompt, p.build(), 100, true));
      reqs.add(new GenerationRequest(prompt, p.minTokens(30).build(), 100, true));
    }
    try (BatchGenerator g = new BatchGenerator(random, 8, 512, 1)) {
      int[][] out = g.generate(reqs, (r, i, token, logprob) -> {});
      for (int i = 0; i < 4; i++) {
        assertThat(out[2 * i].length).isLessThan(30);
        assertThat(out[2 * i + 1].length).isGreaterThanOrEqualTo(31);
        for (int k = 0; k < 30; k++) {
          assertThat(out[2 * i + 1][k]).isNotEqualTo(eos);
        }
        assertThat(out[2 * i + 1][out[2 * i + 1].length - 1]).isEqualTo(eos);
      }
    }
  }

  /**
   * The generator closes a thought at its budget (the zoo's Qwen3, a bias on {@code <think>} making
   * it think on), in a batch beside an uncapped request that is left alone.
   */
  @Test
  void theGeneratorClosesAThoughtAtItsBudget() {
    LlamaModel qwen3 =
        io.flinfer.runtime.gguf.GgufModelLoader.load(
            io.flinfer.runtime.testing.SharedFiles.root().resolve("models/zoo/qwen3-tiny.gguf"));
    int think = 151667;
    int[] prompt = qwen3.tokenizer().encode("<|im_start|>user\nHi<|im_end|>\n", false, true);
    SamplingParams.Builder p =
        SamplingParams.builder()
            .logitBias(new int[] {think}, new float[] {100f})
            .thinking(io.flinfer.runtime.grammar.Thinking.MAY_OPEN);
    List<GenerationRequest> reqs =
        List.of(
            new GenerationRequest(prompt, p.thinkingBudget(1).build(), 6, true),
            new GenerationRequest(
                prompt, p.thinkingBudget(SamplingParams.NO_THINKING_BUDGET).build(), 6, true));
    try (BatchGenerator g = new BatchGenerator(qwen3, 2, 256, 1)) {
      int[][] out = g.generate(reqs, (r, i, token, logprob) -> {});
      assertThat(out[0]).containsExactly(think, think, 198, 151668, 271, think);
      assertThat(out[1]).containsOnly(think).hasSize(6);
    }
  }
}
