package io.flinfer.runtime.gguf;

import io.flinfer.runtime.model.ModelFormatException;
import io.flinfer.runtime.tokenizer.Gpt2BpeTokenizer;
import io.flinfer.runtime.tokenizer.SentencePieceTokenizer;
import io.flinfer.runtime.tokenizer.Tokenizer;

/** Builds the tokenizer described by a GGUF file's {@code tokenizer.ggml.*} metadata. */
public final class GgufTokenizers {
  private GgufTokenizers() {}

  public static Tokenizer read(GgufFile f) {
    String name = f.path().toString();
    String model = f.getString("tokenizer.ggml.model", null);
    Object tokensObj = f.get("tokenizer.ggml.tokens");
    if (model == null || !(tokensObj instanceof String[])) {
      throw new ModelFormatException(
          name, "no tokenizer in the metadata (tokenizer.ggml.model / tokens)");
    }
    String[] tokens = (String[]) tokensObj;
    int[] types =
        f.get("tokenizer.ggml.token_type") instanceof int[]
            ? (int[]) f.get("tokenizer.ggml.token_type")
            : null;
    int bos = f.getInt("tokenizer.ggml.bos_token_id", -1);
    int eos = f.getInt("tokenizer.ggml.eos_token_id", -1);
    switch (model) {
      case "llama":
        {
          float[] scores =
              f.get("tokenizer.ggml.scores") instanceof float[]
                  ? (float[]) f.get("tokenizer.ggml.scores")
                  : new float[tokens.length];
          boolean addBos = bool(f, "tokenizer.ggml.add_bos_token", true);
          boolean spacePrefix = bool(f, "tokenizer.ggml.add_space_prefix", true);
          return new SentencePieceTokenizer(tokens, scores, types, bos, eos, addBos, spacePrefix);
        }
      case "gpt2":
        {
          Object merges = f.get("tokenizer.ggml.merges");
          if (!(merges instanceof String[])) {
            throw new ModelFormatException(name, "gpt2 tokenizer without tokenizer.ggml.merges");
          }
          return new Gpt2BpeTokenizer(
              tokens,
              types,
              (String[]) merges,
              bos,
              eos,
              bool(f, "tokenizer.ggml.add_bos_token", false));
        }
      default:
        throw new ModelFormatException(
            name, "tokenizer model " + model + " is not supported (llama and gpt2 are)");
    }
  }

  private static boolean bool(GgufFile f, String key, boolean fallback) {
    Object v = f.get(key);
    return v instanceof Boolean ? (Boolean) v : fallback;
  }
}
