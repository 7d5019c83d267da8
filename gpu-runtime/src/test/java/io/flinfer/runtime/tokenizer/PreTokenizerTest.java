package io.flinfer.runtime.tokenizer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

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
    assertThat(PreTokenizer.byGgufName("mpt")).isEqualTo(PreTokenizer.GPT2);
    assertThat(PreTokenizer.byGgufName("deepseek-coder")).isEqualTo(PreTokenizer.DEEPSEEK_CODER);
    assertThat(PreTokenizer.byGgufName(null)).isEqualTo(PreTokenizer.GPT2);
    assertThatThrownBy(() -> PreTokenizer.byGgufName("falcon"))
        .hasMessageContaining("tokenizer.ggml.pre = falcon is not supported");
  }
}
