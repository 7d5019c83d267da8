package io.flinfer.runtime.gguf;

import io.flinfer.runtime.model.LlamaModel;
import io.flinfer.runtime.model.LlamaWeights;
import io.flinfer.runtime.model.ModelConfig;
import io.flinfer.runtime.model.ModelFormatException;
import io.flinfer.runtime.tensor.GgmlType;
import io.flinfer.runtime.tensor.WeightMatrix;
import io.flinfer.runtime.tokenizer.Tokenizer;
import java.nio.ByteBuffer;
import java.nio.file.Path;

/** Loads a {@code llama}-architecture GGUF model with the tokenizer in its metadata. */
public final class GgufModelLoader {
  private GgufModelLoader() {}

  public static LlamaModel load(Path path) {
    GgufFile f = GgufFile.open(path);
    String name = path.toString();
    String arch = f.getString("general.architecture", null);
    if (!"llama".equals(arch)) {
      throw new ModelFormatException(name, "architecture " + arch + " is not supported (llama is)");
    }
    Tokenizer tokenizer = GgufTokenizers.read(f);
    int dim = f.requireInt("llama.embedding_length");
    int heads = f.requireInt("llama.attention.head_count");
    ModelConfig config =
        new ModelConfig(
            dim,
            f.requireInt("llama.feed_forward_length"),
            f.requireInt("llama.block_count"),
            heads,
            f.getInt("llama.attention.head_count_kv", heads),
            tokenizer.vocabSize(),
            f.requireInt("llama.context_length"),
            f.getFloat("llama.rope.freq_base", 10000f),
            f.getFloat("llama.attention.layer_norm_rms_epsilon", 1e-5f));
    int rot = f.getInt("llama.rope.dimension_count", config.headDim());
    if (rot != config.headDim()) {
      throw new ModelFormatException(
          name, "partial RoPE (" + rot + " of " + config.headDim() + " dims) is not supported");
    }
    int layers = config.layers();
    WeightMatrix embedding = matrix(f, "token_embd.weight");
    WeightMatrix classifier =
        f.tensors().containsKey("output.weight") ? matrix(f, "output.weight") : embedding;
    float[][] rmsAtt = new float[layers][];
    float[][] rmsFfn = new float[layers][];
    WeightMatrix[] wq = new WeightMatrix[layers];
    WeightMatrix[] wk = new WeightMatrix[layers];
    WeightMatrix[] wv = new WeightMatrix[layers];
    WeightMatrix[] wo = new WeightMatrix[layers];
    WeightMatrix[] w1 = new WeightMatrix[layers];
    WeightMatrix[] w2 = new WeightMatrix[layers];
    WeightMatrix[] w3 = new WeightMatrix[layers];
    for (int l = 0; l < layers; l++) {
      String p = "blk." + l + ".";
      rmsAtt[l] = vector(f, p + "attn_norm.weight");
      rmsFfn[l] = vector(f, p + "ffn_norm.weight");
      wq[l] = matrix(f, p + "attn_q.weight");
      wk[l] = matrix(f, p + "attn_k.weight");
      wv[l] = matrix(f, p + "attn_v.weight");
      wo[l] = matrix(f, p + "attn_output.weight");
      w1[l] = matrix(f, p + "ffn_gate.weight");
      w2[l] = matrix(f, p + "ffn_down.weight");
      w3[l] = matrix(f, p + "ffn_up.weight");
    }
    LlamaWeights weights =
        new LlamaWeights(
            embedding,
            rmsAtt,
            wq,
            wk,
            wv,
            wo,
            rmsFfn,
            w1,
            w2,
            w3,
            vector(f, "output_norm.weight"),
            classifier);
    weights.validate(config, name);
    return new LlamaModel(path.getFileName().toString(), config, weights, tokenizer);
  }

  private static GgufFile.TensorInfo info(GgufFile f, String tensor) {
    GgufFile.TensorInfo t = f.tensors().get(tensor);
    if (t == null) {
      throw new ModelFormatException(f.path().toString(), "tensor " + tensor + " is missing");
    }
    return t;
  }

  private static WeightMatrix matrix(GgufFile f, String tensor) {
    GgufFile.TensorInfo t = info(f, tensor);
    if (t.dims().length != 2) {
      throw new ModelFormatException(f.path().toString(), "tensor " + tensor + " is not a matrix");
    }
    ByteBuffer data = f.map(t);
    return WeightMatrix.of(GgmlType.byId(t.typeId()), data, (int) t.dims()[1], (int) t.dims()[0]);
  }

  private static float[] vector(GgufFile f, String tensor) {
    GgufFile.TensorInfo t = info(f, tensor);
    int n = (int) t.elements();
    float[] v = new float[n];
    WeightMatrix.of(GgmlType.byId(t.typeId()), f.map(t), 1, n).decodeRow(0, v, 0);
    return v;
  }
}
