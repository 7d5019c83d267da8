package io.flinfer.runtime.gguf;

import io.flinfer.runtime.model.ModelFormatException;
import io.flinfer.runtime.tokenizer.Gpt2BpeTokenizer;
import io.flinfer.runtime.tokenizer.PreTokenizer;
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
    int[] ends = endTokens(f, tokens, types, eos);
    switch (model) {
      case "llama":
        {
          float[] scores =
              f.get("tokenizer.ggml.scores") instanceof float[]
                  ? (float[]) f.get("tokenizer.ggml.scores")
                  : new float[tokens.length];
          boolean addBos = bool(f, "tokenizer.ggml.add_bos_token", true);
          boolean spacePrefix = bool(f, "tokenizer.ggml.add_space_prefix", true);
          return new SentencePieceTokenizer(
              tokens, scores, types, bos, eos, addBos, spacePrefix, ends);
        }
      case "gpt2":
        {
          Object merges = f.get("tokenizer.ggml.merges");
          if (!(merges instanceof String[])) {
            throw new ModelFormatException(name, "gpt2 tokenizer without tokenizer.ggml.merges");
          }
          PreTokenizer pre;
          try {
            pre = PreTokenizer.byGgufName(f.getString("tokenizer.ggml.pre", null));
          } catch (IllegalArgumentException e) {
            throw new ModelFormatException(name, e.getMessage());
          }
          return new Gpt2BpeTokenizer(
              tokens,
              types,
              (String[]) merges,
              bos,
              eos,
              bool(f, "tokenizer.ggml.add_bos_token", false),
              ends,
              pre);
        }
      default:
        throw new ModelFormatException(
            name, "tokenizer model " + model + " is not supported (llama and gpt2 are)");
    }
  }

  /**
   * Texts of control tokens that end a turn in the families' chat formats; llama.cpp treats them as
   * ends of generation too, whether or not the metadata names them.
   */
  private static final java.util.Set<String> END_OF_TURN =
      java.util.Set.of(
          "<|eot_id|>",
          "<|eom_id|>",
          "<|im_end|>",
          "<|end|>",
          "<end_of_turn>",
          "<|endoftext|>",
          "<|end_of_text|>",
          "<EOT>",
          "<|return|>",
          "<|call|>");

  /**
   * The end-of-sequence token, the metadata's end-of-turn and end-of-message tokens, and the
   * control tokens spelled as a family's end of turn.
   */
  static int[] endTokens(GgufFile f, String[] tokens, int[] types, int eos) {
    java.util.TreeSet<Integer> ends = new java.util.TreeSet<>();
    for (String key : new String[] {"tokenizer.ggml.eot_token_id", "tokenizer.ggml.eom_token_id"}) {
      int id = f.getInt(key, -1);
      if (id >= 0 && id < tokens.length) {
        ends.add(id);
      }
    }
    if (eos >= 0 && eos < tokens.length) {
      ends.add(eos);
    }
    for (int i = 0; i < tokens.length; i++) {
      boolean special = types == null || types[i] == 3 || types[i] == 4;
      if (special && END_OF_TURN.contains(tokens[i])) {
        ends.add(i);
      }
    }
    return ends.stream().mapToInt(Integer::intValue).toArray();
  }

  private static boolean bool(GgufFile f, String key, boolean fallback) {
    Object v = f.get(key);
    return v instanceof Boolean ? (Boolean) v : fallback;
  }
}
