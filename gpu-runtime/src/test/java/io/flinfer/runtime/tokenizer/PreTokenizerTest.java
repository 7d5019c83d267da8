package io.flinfer.runtime.tokenizer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.flinfer.runtime.testing.SharedFiles;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The pre-tokenizers split text into words that make up the whole text, as llama.cpp and the
 * families' Hugging Face tokenizers split it. (The words' ids against those tokenizers are {@link
 * VocabTestVectorsTest}'s.)
 */
class PreTokenizerTest {

  private static List<String> words(PreTokenizer pre, String text) {
    List<String> words = new ArrayList<>();
    pre.split(text, words::add);
    return words;
  }

  @Property(tries = 300)
  void theWordsMakeUpTheText(@ForAll("texts") String text) {
    for (PreTokenizer pre : PreTokenizer.values()) {
      List<String> words = words(pre, text);
      assertThat(String.join("", words)).as(pre.name()).isEqualTo(text);
      assertThat(words).as(pre.name()).doesNotContain("");
    }
  }

  @Provide
  Arbitrary<String> texts() {
    return Arbitraries.strings().withChars("aZé ü\n\r\t0123,.!?'-=;字中가Яя😀\u3000！").ofMaxLength(24);
  }

  /**
   * Tekken's, Llama 3's and Qwen2's splits of the 90 shared reference inputs and of texts that turn
   * between cases, scripts and digits, as {@code @huggingface/tokenizers} splits them ({@code
   * splits.json}, written by {@code splits.mjs} beside it).
   */
  @ParameterizedTest
  @ValueSource(strings = {"TEKKEN", "LLAMA3", "QWEN2"})
  void splitsAsTheHuggingFaceTokenizersDo(String family) throws Exception {
    JsonNode golden;
    try (InputStream in = getClass().getResourceAsStream("/tokenizer/splits.json")) {
      golden = new ObjectMapper().readTree(in);
    }
    PreTokenizer pre = PreTokenizer.valueOf(family);
    JsonNode splits = golden.get("splits").get(family);
    List<String> extra = new ArrayList<>();
    golden.get("extra").forEach(t -> extra.add(t.asText()));
    assertSplits(pre, extra, splits.get("extra"));
    Path shared = SharedFiles.root().resolve("tokenizers").resolve("qwen3.gguf.inp");
    if (Files.exists(shared)) {
      List<String> inputs =
          new ArrayList<>(
              Arrays.asList(Files.readString(shared).split("\n__ggml_vocab_test__\n", -1)));
      inputs.remove(inputs.size() - 1);
      assertSplits(pre, inputs, splits.get("shared"));
    }
  }

  private static void assertSplits(PreTokenizer pre, List<String> texts, JsonNode expected) {
    assertThat(texts).hasSize(expected.size());
    for (int i = 0; i < texts.size(); i++) {
      List<String> want = new ArrayList<>();
      expected.get(i).forEach(w -> want.add(w.asText()));
      assertThat(words(pre, pre.normalize(texts.get(i))))
          .as("%s, text %d %s", pre, i, texts.get(i))
          .containsExactlyElementsOf(want);
    }
  }

  @Test
  void starCoderFamiliesTakeEveryDigitAlone() {
    assertThat(words(PreTokenizer.DIGITS_THEN_GPT2, "abc 12345 def's"))
        .containsExactly("abc", " ", "1", "2", "3", "4", "5", " def", "'s");
    assertThat(words(PreTokenizer.GPT2, "abc 12345 def's"))
        .containsExactly("abc", " 12345", " def", "'s");
  }

  @Test
  void deepSeekCoderSplitsLinesLettersPunctuationAndDigitsInTurn() {
    assertThat(words(PreTokenizer.DEEPSEEK_CODER, "int x = 42;\n"))
        .containsExactly("int", " x", " = ", "4", "2", ";", "\n");
  }

  @Test
  void deepSeekLlmKeepsDigitRunsAndTrailingSpaces() {
    assertThat(words(PreTokenizer.DEEPSEEK_LLM, "Hello, world 2024!\n"))
        .containsExactly("Hello", ",", " world", " ", "2024", "!", "\n");
    assertThat(words(PreTokenizer.DEEPSEEK_LLM, "ab  ")).containsExactly("ab", "  ");
  }

  @Test
  void llamaCppsNamesChooseTheirFamiliesSplit() {
    assertThat(PreTokenizer.byGgufName("smollm")).isEqualTo(PreTokenizer.DIGITS_THEN_GPT2);
    assertThat(PreTokenizer.byGgufName("starcoder")).isEqualTo(PreTokenizer.DIGITS_THEN_GPT2);
    assertThat(PreTokenizer.byGgufName("deepseek-r1-qwen")).isEqualTo(PreTokenizer.QWEN2);
    assertThat(PreTokenizer.byGgufName("falcon3")).isEqualTo(PreTokenizer.LLAMA3);
    assertThat(PreTokenizer.byGgufName("tekken")).isEqualTo(PreTokenizer.TEKKEN);
    assertThat(PreTokenizer.byGgufName("mpt")).isEqualTo(PreTokenizer.GPT2);
    assertThat(PreTokenizer.byGgufName("deepseek-coder")).isEqualTo(PreTokenizer.DEEPSEEK_CODER);
    assertThat(PreTokenizer.byGgufName(null)).isEqualTo(PreTokenizer.GPT2);
    assertThatThrownBy(() -> PreTokenizer.byGgufName("falcon"))
        .hasMessageContaining("tokenizer.ggml.pre = falcon is not supported");
  }
}
