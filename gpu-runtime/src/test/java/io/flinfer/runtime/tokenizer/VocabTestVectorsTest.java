package io.flinfer.runtime.tokenizer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.flinfer.runtime.gguf.GgufFile;
import io.flinfer.runtime.gguf.GgufTokenizers;
import io.flinfer.runtime.testing.SharedFiles;
import java.nio.file.Files;
import java.nio.file.Path;
import java.text.Normalizer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Tokenizers read from llama.cpp's vocabulary-only GGUFs encode every test input to exactly
 * llama.cpp's ids, and decode them back to the input.
 */
class VocabTestVectorsTest {

  @ParameterizedTest
  @ValueSource(
      strings = {"ggml-vocab-llama-spm", "ggml-vocab-gpt-2", "llama3_1", "qwen3", "gemma3"})
  void encodesLikeLlamaCppAndDecodesBack(String vocab) throws Exception {
    Path dir = SharedFiles.root().resolve("tokenizers");
    Path gguf = dir.resolve(vocab + ".gguf");
    assumeTrue(Files.exists(gguf), "missing " + gguf);
    // Qwen's tokenizer NFC-normalizes text first: its decoding is the normalized input.
    check(gguf, dir.resolve(vocab + ".gguf"), vocab.equals("qwen3"));
  }

  /**
   * The other families' pre-tokenizers against the vectors in llama.cpp's {@code models/} folder
   * (made with each family's Hugging Face tokenizer), where {@code FLINFER_LLAMACPP_MODELS} names
   * that folder: no registry serves those files, so CI has none and skips this. The DeepSeek-R1
   * distillations of Qwen carry Qwen's vocabulary: their vectors run on the Qwen3 one.
   */
  @ParameterizedTest
  @ValueSource(
      strings = {
        "starcoder",
        "refact",
        "deepseek-coder",
        "deepseek-llm",
        "mpt",
        "gpt-2",
        "deepseek-r1-qwen"
      })
  void encodesLikeTheFamiliesInLlamaCppsModels(String family) throws Exception {
    String models = System.getenv("FLINFER_LLAMACPP_MODELS");
    assumeTrue(models != null, "FLINFER_LLAMACPP_MODELS is not set");
    Path vectors = Path.of(models).resolve("ggml-vocab-" + family + ".gguf");
    Path gguf =
        family.equals("deepseek-r1-qwen")
            ? SharedFiles.root().resolve("tokenizers").resolve("qwen3.gguf")
            : vectors;
    assumeTrue(Files.exists(gguf) && Files.size(gguf) > 0, "missing " + gguf);
    check(gguf, vectors, family.equals("deepseek-r1-qwen"));
  }

  /**
   * Every input of {@code vectors.inp} encodes to the ids on its line of {@code vectors.out}, and
   * those decode back to the input ({@code nfc}: to its NFC form).
   */
  private static void check(Path gguf, Path vectors, boolean nfc) throws Exception {
    GgufFile file = GgufFile.open(gguf);
    Tokenizer tok = GgufTokenizers.read(file);
    String[] texts = (String[]) file.get("tokenizer.ggml.tokens");
    int[] types = (int[]) file.get("tokenizer.ggml.token_type");
    String inp = Files.readString(Path.of(vectors + ".inp"));
    List<String> inputs = new ArrayList<>(Arrays.asList(inp.split("\n__ggml_vocab_test__\n", -1)));
    if (inputs.get(inputs.size() - 1).isEmpty()) {
      inputs.remove(inputs.size() - 1);
    }
    List<String> outputs = Files.readAllLines(Path.of(vectors + ".out"));
    assertThat(inputs).hasSameSizeAs(outputs);
    for (int i = 0; i < inputs.size(); i++) {
      String text = inputs.get(i);
      int[] expected =
          outputs.get(i).isBlank()
              ? new int[0]
              : Arrays.stream(outputs.get(i).trim().split(" +"))
                  .mapToInt(Integer::parseInt)
                  .toArray();
      // The reference vectors parse special-token text as the special token.
      assertThat(tok.encode(text, false, true))
          .as("encoding of input %d %s", i, show(text))
          .containsExactly(expected);
      String back = nfc ? Normalizer.normalize(text, Normalizer.Form.NFC) : text;
      // Control tokens add no text to a completion.
      for (int id : expected) {
        if (types != null && types[id] == 3) {
          back = back.replaceFirst(Pattern.quote(texts[id]), "");
        }
      }
      assertThat(tok.decode(expected)).as("decoding of input %d %s", i, show(text)).isEqualTo(back);
    }
  }

  private static String show(String s) {
    return "'" + s.replace("\n", "\\n").replace("\t", "\\t") + "'";
  }

  @ParameterizedTest
  @ValueSource(strings = {"llama3_1", "qwen3", "gemma3"})
  void userTextCannotForgeAControlToken(String vocab) throws Exception {
    Path gguf = SharedFiles.root().resolve("tokenizers").resolve(vocab + ".gguf");
    assumeTrue(Files.exists(gguf), "missing " + gguf);
    GgufFile file = GgufFile.open(gguf);
    Tokenizer tok = GgufTokenizers.read(file);
    String[] texts = (String[]) file.get("tokenizer.ggml.tokens");
    int eot = tok.endTokens()[tok.endTokens().length - 1];
    String forged = "Hi" + texts[eot] + "there";
    assertThat(tok.encode(forged, false, true)).contains(eot);
    int[] asText = tok.encode(forged, false, false);
    assertThat(asText).doesNotContain(eot);
    assertThat(tok.decode(asText)).isEqualTo(forged);
  }

  @Test
  void anUnknownPreTokenizerIsALoadErrorNamingIt() {
    assertThatThrownBy(() -> PreTokenizer.byGgufName("poro-chat"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("tokenizer.ggml.pre = poro-chat");
  }

  @Test
  void aCharacterWithoutATokenOrByteFallbackIsAnError() {
    SentencePieceTokenizer noFallback =
        new SentencePieceTokenizer(
            new String[] {"<unk>", "<s>", "</s>", "a", "b"},
            new float[5],
            new int[] {2, 3, 3, 1, 1},
            1,
            2,
            false,
            false);
    assertThat(noFallback.encode("ab", false)).containsExactly(3, 4);
    assertThatThrownBy(() -> noFallback.encode("aé", false))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("no byte fallback");
  }
}
