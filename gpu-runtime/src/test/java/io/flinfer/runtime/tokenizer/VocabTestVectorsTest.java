package io.flinfer.runtime.tokenizer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.flinfer.runtime.gguf.GgufFile;
import io.flinfer.runtime.gguf.GgufTokenizers;
import io.flinfer.runtime.testing.SharedFiles;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Tokenizers read from llama.cpp's vocabulary-only GGUFs encode every test input to exactly
 * llama.cpp's ids, and decode them back to the input.
 */
class VocabTestVectorsTest {

  @ParameterizedTest
  @ValueSource(strings = {"ggml-vocab-llama-spm", "ggml-vocab-gpt-2"})
  void encodesLikeLlamaCppAndDecodesBack(String vocab) throws Exception {
    Path dir = SharedFiles.root().resolve("tokenizers");
    Path gguf = dir.resolve(vocab + ".gguf");
    assumeTrue(Files.exists(gguf), "missing " + gguf);
    Tokenizer tok = GgufTokenizers.read(GgufFile.open(gguf));
    String inp = Files.readString(dir.resolve(vocab + ".gguf.inp"));
    List<String> inputs = new ArrayList<>(Arrays.asList(inp.split("\n__ggml_vocab_test__\n", -1)));
    if (inputs.get(inputs.size() - 1).isEmpty()) {
      inputs.remove(inputs.size() - 1);
    }
    List<String> outputs = Files.readAllLines(dir.resolve(vocab + ".gguf.out"));
    assertThat(inputs).hasSameSizeAs(outputs);
    for (int i = 0; i < inputs.size(); i++) {
      String text = inputs.get(i);
      int[] expected =
          outputs.get(i).isBlank()
              ? new int[0]
              : Arrays.stream(outputs.get(i).trim().split(" +"))
                  .mapToInt(Integer::parseInt)
                  .toArray();
      assertThat(tok.encode(text, false))
          .as("encoding of input %d %s", i, show(text))
          .containsExactly(expected);
      assertThat(tok.decode(expected)).as("decoding of input %d %s", i, show(text)).isEqualTo(text);
    }
  }

  private static String show(String s) {
    return "'" + s.replace("\n", "\\n").replace("\t", "\\t") + "'";
  }
}
