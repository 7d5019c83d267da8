package io.flinfer.runtime.gguf;

import io.flinfer.runtime.model.ModelConfig;
import io.flinfer.runtime.tensor.GgmlType;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/**
 * Writes a GGUF model with random weights in a given shape and tensor type, as serving benchmarks
 * do for models whose trained weights are not at hand: the layout of the shape's architecture with
 * a placeholder SentencePiece vocabulary of the shape's size. Matrices are uniform in {@code
 * +-1/sqrt(cols)}, norm weights 1, biases small, so activations stay in a realistic range. Each row
 * is a pure function of (seed, tensor, row), written in parallel and streamed to disk.
 */
public final class RandomGgufModel {
  private RandomGgufModel() {}

  /** Writes {@code file} unless it is already there; returns it. */
  public static Path write(ModelConfig c, GgmlType type, boolean tied, long seed, Path file)
      throws IOException {
    return write(c, WeightTypes.uniform(type), tied, seed, file);
  }

  /** Writes {@code file} unless it is already there, each matrix in its type; returns it. */
  public static Path write(ModelConfig c, WeightTypes types, boolean tied, long seed, Path file)
      throws IOException {
    if (Files.isRegularFile(file)) {
      return file;
    }
    Files.createDirectories(file.toAbsolutePath().getParent());
    String a = c.architecture();
    GgufWriter g = new GgufWriter();
    g.put("general.architecture", a)
        .put("general.name", "random " + file.getFileName())
        .putUnsigned(a + ".context_length", c.contextLength())
        .putUnsigned(a + ".embedding_length", c.dim())
        .putUnsigned(a + ".feed_forward_length", c.hiddenDim())
        .putUnsigned(a + ".block_count", c.layers())
        .putUnsigned(a + ".attention.head_count", c.heads())
        .putUnsigned(a + ".attention.head_count_kv", c.kvHeads())
        .putUnsigned(a + ".attention.key_length", c.headDim())
        .putUnsigned(a + ".attention.value_length", c.headDim())
        .put(a + ".rope.freq_base", c.ropeTheta())
        .put(a + ".attention.layer_norm_rms_epsilon", c.normEps());
    if (c.slidingWindow() != null) {
      g.putUnsigned(a + ".attention.sliding_window", c.slidingWindow().positions())
          .putUnsigned(a + ".attention.sliding_window_pattern", c.slidingWindow().period())
          .put(a + ".rope.freq_base_swa", c.slidingWindow().rope().theta());
    }
    if (c.multipliers() != null) {
      g.put(a + ".embedding_scale", c.embeddingScale())
          .put(a + ".attention.scale", c.multipliers().attention())
          .put(a + ".residual_scale", c.multipliers().residual())
          .put(a + ".logit_scale", c.multipliers().logits());
    }
    if (c.softCaps() != null) {
      g.put(a + ".attn_logit_softcapping", c.attentionSoftCap())
          .put(a + ".final_logit_softcapping", c.logitSoftCap());
    }
    vocabulary(g, c.vocabSize());
    int[] tensor = {0};
    g.tensor(
        "token_embd.weight",
        types.embedding(tied),
        c.vocabSize(),
        c.dim(),
        random(seed, tensor[0]++, 1f));
    g.tensor("output_norm.weight", GgmlType.F32, 1, c.dim(), ones());
    if (!tied) {
      g.tensor(
          "output.weight",
          types.output(),
          c.vocabSize(),
          c.dim(),
          scaled(seed, tensor[0]++, c.dim()));
    }
    for (int l = 0; l < c.layers(); l++) {
      String p = "blk." + l + ".";
      g.tensor(p + "attn_norm.weight", GgmlType.F32, 1, c.dim(), ones());
      g.tensor(
          p + "attn_q.weight",
          types.layer("attn_q", l),
          c.qDim(),
          c.dim(),
          scaled(seed, tensor[0]++, c.dim()));
      g.tensor(
          p + "attn_k.weight",
          types.layer("attn_k", l),
          c.kvDim(),
          c.dim(),
          scaled(seed, tensor[0]++, c.dim()));
      g.tensor(
          p + "attn_v.weight",
          types.layer("attn_v", l),
          c.kvDim(),
          c.dim(),
          scaled(seed, tensor[0]++, c.dim()));
      if (c.qkvBias()) {
        g.tensor(p + "attn_q.bias", GgmlType.F32, 1, c.qDim(), random(seed, tensor[0]++, 0.01f));
        g.tensor(p + "attn_k.bias", GgmlType.F32, 1, c.kvDim(), random(seed, tensor[0]++, 0.01f));
        g.tensor(p + "attn_v.bias", GgmlType.F32, 1, c.kvDim(), random(seed, tensor[0]++, 0.01f));
      }
      if (c.qkNorm()) {
        g.tensor(p + "attn_q_norm.weight", GgmlType.F32, 1, c.headDim(), ones());
        g.tensor(p + "attn_k_norm.weight", GgmlType.F32, 1, c.headDim(), ones());
      }
      g.tensor(
          p + "attn_output.weight",
          types.layer("attn_output", l),
          c.dim(),
          c.qDim(),
          scaled(seed, tensor[0]++, c.qDim()));
      g.tensor(p + "ffn_norm.weight", GgmlType.F32, 1, c.dim(), ones());
      g.tensor(
          p + "ffn_gate.weight",
          types.layer("ffn_gate", l),
          c.hiddenDim(),
          c.dim(),
          scaled(seed, tensor[0]++, c.dim()));
      g.tensor(
          p + "ffn_up.weight",
          types.layer("ffn_up", l),
          c.hiddenDim(),
          c.dim(),
          scaled(seed, tensor[0]++, c.dim()));
      g.tensor(
          p + "ffn_down.weight",
          types.layer("ffn_down", l),
          c.dim(),
          c.hiddenDim(),
          scaled(seed, tensor[0]++, c.hiddenDim()));
      if (c.postNorms()) {
        g.tensor(p + "post_attention_norm.weight", GgmlType.F32, 1, c.dim(), ones());
        g.tensor(p + "post_ffw_norm.weight", GgmlType.F32, 1, c.dim(), ones());
      }
    }
    Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
    g.write(tmp);
    Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING);
    return file;
  }

  /** The placeholder vocabulary: control tokens, the 256 byte tokens, numbered pieces. */
  private static void vocabulary(GgufWriter g, int size) {
    String[] tokens = new String[size];
    int[] types = new int[size];
    tokens[0] = "<unk>";
    tokens[1] = "<s>";
    tokens[2] = "</s>";
    types[0] = 2;
    types[1] = 3;
    types[2] = 3;
    for (int b = 0; b < 256; b++) {
      tokens[3 + b] = String.format("<0x%02X>", b);
      types[3 + b] = 6;
    }
    for (int i = 259; i < size; i++) {
      tokens[i] = "<piece" + i + ">";
      types[i] = 1;
    }
    g.put("tokenizer.ggml.model", "llama")
        .put("tokenizer.ggml.tokens", tokens)
        .put("tokenizer.ggml.scores", new float[size])
        .put("tokenizer.ggml.token_type", types)
        .putUnsigned("tokenizer.ggml.bos_token_id", 1)
        .putUnsigned("tokenizer.ggml.eos_token_id", 2)
        .putUnsigned("tokenizer.ggml.unknown_token_id", 0);
  }

  private static GgufWriter.RowSource ones() {
    return (r, out) -> java.util.Arrays.fill(out, 1f);
  }

  private static GgufWriter.RowSource scaled(long seed, int tensor, int cols) {
    return random(seed, tensor, (float) (1 / Math.sqrt(cols)));
  }

  /** Uniform in {@code [-scale, scale)}: xorshift64* seeded by (seed, tensor, row). */
  private static GgufWriter.RowSource random(long seed, int tensor, float scale) {
    return (r, out) -> {
      long s = mix(seed ^ mix(((long) tensor << 32) ^ r ^ 0x9E3779B97F4A7C15L));
      if (s == 0) {
        s = 1;
      }
      for (int i = 0; i < out.length; i++) {
        s ^= s >>> 12;
        s ^= s << 25;
        s ^= s >>> 27;
        long v = s * 0x2545F4914F6CDD1DL;
        out[i] = ((v >>> 40) * 0x1.0p-24f * 2 - 1) * scale;
      }
    };
  }

  private static long mix(long z) {
    z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
    z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
    return z ^ (z >>> 31);
  }
}
