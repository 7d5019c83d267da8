package io.flinfer.runtime.gguf;

import io.flinfer.runtime.model.LlamaModel;
import io.flinfer.runtime.model.LlamaWeights;
import io.flinfer.runtime.model.ModelConfig;
import io.flinfer.runtime.tensor.GgmlType;
import io.flinfer.runtime.tensor.WeightMatrix;
import io.flinfer.runtime.tokenizer.SentencePieceTokenizer;
import java.io.IOException;
import java.nio.file.Path;

/** Converts a loaded model (with a SentencePiece tokenizer) to a GGUF file of a given type. */
public final class ModelConversion {
  private ModelConversion() {}

  /**
   * Matrices whose rows do not fill whole quantization blocks stay F32, as llama.cpp's quantizer
   * leaves them.
   */
  public static void writeGguf(LlamaModel model, GgmlType type, Path file) throws IOException {
    ModelConfig c = model.config();
    LlamaWeights w = model.weights();
    SentencePieceTokenizer tok = (SentencePieceTokenizer) model.tokenizer();
    int n = tok.vocabSize();
    String[] pieces = new String[n];
    float[] scores = new float[n];
    int[] types = new int[n];
    for (int i = 0; i < n; i++) {
      String p = tok.piece(i);
      boolean isByte = p.length() == 6 && p.startsWith("<0x");
      pieces[i] = isByte ? p : p.replace(' ', '\u2581');
      types[i] =
          tok.isControl(i)
              ? SentencePieceTokenizer.TYPE_CONTROL
              : isByte ? SentencePieceTokenizer.TYPE_BYTE : SentencePieceTokenizer.TYPE_NORMAL;
    }
    GgufWriter g =
        new GgufWriter()
            .put("general.architecture", "llama")
            .put("general.alignment", 32)
            .put("llama.embedding_length", c.dim())
            .put("llama.feed_forward_length", c.hiddenDim())
            .put("llama.block_count", c.layers())
            .put("llama.attention.head_count", c.heads())
            .put("llama.attention.head_count_kv", c.kvHeads())
            .put("llama.context_length", c.contextLength())
            .put("llama.rope.dimension_count", c.headDim())
            .put("llama.attention.layer_norm_rms_epsilon", c.normEps())
            .put("tokenizer.ggml.model", "llama")
            .put("tokenizer.ggml.tokens", pieces)
            .put("tokenizer.ggml.scores", scoresOf(tok, n))
            .put("tokenizer.ggml.token_type", types)
            .put("tokenizer.ggml.bos_token_id", tok.bosId())
            .put("tokenizer.ggml.eos_token_id", tok.eosId());
    g.tensor(
        "token_embd.weight",
        type(type, w.tokenEmbedding()),
        all(w.tokenEmbedding()),
        c.vocabSize(),
        c.dim());
    g.tensor("output_norm.weight", GgmlType.F32, w.rmsFinal(), 1, c.dim());
    for (int l = 0; l < c.layers(); l++) {
      String p = "blk." + l + ".";
      g.tensor(p + "attn_norm.weight", GgmlType.F32, w.rmsAtt()[l], 1, c.dim());
      g.tensor(p + "ffn_norm.weight", GgmlType.F32, w.rmsFfn()[l], 1, c.dim());
      matrix(g, p + "attn_q.weight", type, w.wq()[l]);
      matrix(g, p + "attn_k.weight", type, w.wk()[l]);
      matrix(g, p + "attn_v.weight", type, w.wv()[l]);
      matrix(g, p + "attn_output.weight", type, w.wo()[l]);
      matrix(g, p + "ffn_gate.weight", type, w.w1()[l]);
      matrix(g, p + "ffn_down.weight", type, w.w2()[l]);
      matrix(g, p + "ffn_up.weight", type, w.w3()[l]);
    }
    g.write(file);
  }

  private static float[] scoresOf(SentencePieceTokenizer tok, int n) {
    float[] s = new float[n];
    for (int i = 0; i < n; i++) {
      s[i] = tok.score(i);
    }
    return s;
  }

  private static GgmlType type(GgmlType wanted, WeightMatrix m) {
    return m.cols() % wanted.blockSize() == 0 ? wanted : GgmlType.F32;
  }

  private static void matrix(GgufWriter g, String name, GgmlType type, WeightMatrix m) {
    g.tensor(name, type(type, m), all(m), m.rows(), m.cols());
  }

  private static float[] all(WeightMatrix m) {
    float[] v = new float[m.rows() * m.cols()];
    for (int r = 0; r < m.rows(); r++) {
      m.decodeRow(r, v, r * m.cols());
    }
    return v;
  }
}
