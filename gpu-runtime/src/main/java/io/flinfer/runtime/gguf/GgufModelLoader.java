package io.flinfer.runtime.gguf;

import io.flinfer.runtime.chat.ChatTemplate;
import io.flinfer.runtime.kernel.VectorApiSupport;
import io.flinfer.runtime.model.GatedActivation;
import io.flinfer.runtime.model.LlamaModel;
import io.flinfer.runtime.model.LlamaWeights;
import io.flinfer.runtime.model.ModelConfig;
import io.flinfer.runtime.model.ModelFormatException;
import io.flinfer.runtime.model.Multipliers;
import io.flinfer.runtime.model.RopeConfig;
import io.flinfer.runtime.model.SlidingWindow;
import io.flinfer.runtime.model.SoftCaps;
import io.flinfer.runtime.tensor.GgmlType;
import io.flinfer.runtime.tensor.WeightMatrix;
import io.flinfer.runtime.tokenizer.Tokenizer;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Loads a GGUF model of a supported family ({@link ModelFamily}) with the tokenizer in its
 * metadata. Everything in the file that would change the math is either implemented or a load error
 * naming the key or tensor: never silently ignored.
 */
public final class GgufModelLoader {
  /** Metadata keys (after the architecture prefix) whose meaning Flinfer does not implement. */
  private static final List<String> UNSUPPORTED_KEYS =
      List.of(
          "expert_count",
          "attention.layer_norm_epsilon",
          "attention.clamp_kqv",
          "attention.scale",
          "attn_logit_softcapping",
          "final_logit_softcapping",
          "logit_softcapping",
          "embedding_scale",
          "residual_scale",
          "logit_scale");

  private static final Set<String> LAYER_TENSORS =
      Set.of(
          "attn_norm.weight",
          "attn_q.weight",
          "attn_k.weight",
          "attn_v.weight",
          "attn_qkv.weight",
          "attn_q.bias",
          "attn_k.bias",
          "attn_v.bias",
          "attn_q_norm.weight",
          "attn_k_norm.weight",
          "attn_output.weight",
          "ffn_norm.weight",
          "ffn_gate.weight",
          "ffn_up.weight",
          "ffn_down.weight",
          "post_attention_norm.weight",
          "post_ffw_norm.weight");

  /** Gemma 2's soft caps, which it reads (and which stay load errors for the other families). */
  private static final Set<String> GEMMA2_SOFT_CAPS =
      Set.of("attn_logit_softcapping", "final_logit_softcapping");

  /** Granite's multipliers, which it reads (and which stay load errors for the others). */
  private static final Set<String> GRANITE_MULTIPLIERS =
      Set.of("attention.scale", "embedding_scale", "residual_scale", "logit_scale");

  private static final Set<String> MODEL_TENSORS =
      Set.of("token_embd.weight", "output_norm.weight", "output.weight", "rope_freqs.weight");

  private GgufModelLoader() {}

  public static LlamaModel load(Path path) {
    VectorApiSupport.require();
    GgufFile f = GgufFile.open(path);
    String name = path.toString();
    String arch = f.getString("general.architecture", null);
    ModelFamily family = ModelFamily.of(arch);
    if (family == null) {
      throw new ModelFormatException(
          name, "architecture " + arch + " is not supported (" + ModelFamily.supported() + " are)");
    }
    String k = arch + ".";
    for (String key : UNSUPPORTED_KEYS) {
      if (family == ModelFamily.GEMMA2 && GEMMA2_SOFT_CAPS.contains(key)
          || family == ModelFamily.GRANITE && GRANITE_MULTIPLIERS.contains(key)) {
        continue;
      }
      Object v = f.get(k + key);
      if (v != null && !(v instanceof Number && ((Number) v).doubleValue() == 0)) {
        throw new ModelFormatException(
            name, "metadata " + k + key + " = " + v + " changes the model's math: not supported");
      }
    }
    checkTensorNames(f, name);
    Tokenizer tokenizer = GgufTokenizers.read(f);
    int dim = f.requireInt(k + "embedding_length");
    int heads = f.requireInt(k + "attention.head_count");
    int kvHeads = f.getInt(k + "attention.head_count_kv", heads);
    int headDim = f.getInt(k + "attention.key_length", dim / heads);
    int valueDim = f.getInt(k + "attention.value_length", headDim);
    if (valueDim != headDim) {
      throw new ModelFormatException(
          name, "value heads of " + valueDim + " with key heads of " + headDim + ": not supported");
    }
    int rot = f.getInt(k + "rope.dimension_count", headDim);
    if (rot != headDim) {
      throw new ModelFormatException(
          name, "partial RoPE (" + rot + " of " + headDim + " dims) is not supported");
    }
    int context = f.requireInt(k + "context_length");
    int window = f.getInt(k + "attention.sliding_window", 0);
    int layers = f.requireInt(k + "block_count");
    RopeConfig rope = rope(f, k, family, headDim, name);
    SlidingWindow sliding = null;
    SoftCaps softCaps = null;
    Multipliers multipliers = null;
    if (family == ModelFamily.GEMMA3) {
      sliding = gemmaWindow(f, k, window, rope, name);
      multipliers = gemma27bQueryScale(layers == 62, dim, heads, headDim);
    } else if (family == ModelFamily.GEMMA2) {
      sliding = gemma2Window(f, k, rope, name);
      softCaps =
          new SoftCaps(
              f.getFloat(k + "attn_logit_softcapping", 50f),
              f.getFloat(k + "final_logit_softcapping", 30f));
      multipliers = gemma27bQueryScale(layers == 46, dim, heads, headDim);
    } else if (window > 0 && window < context) {
      // Within the window, sliding-window attention is plain causal attention.
      System.err.printf(
          "%s: sliding window of %d positions, shorter than the context of %d: serving contexts"
              + " up to %d%n",
          path.getFileName(), window, context, window);
      context = window;
    }
    boolean bias = f.tensors().containsKey("blk.0.attn_q.bias");
    boolean qkNorm = f.tensors().containsKey("blk.0.attn_q_norm.weight");
    boolean gemma = family.gemma();
    float embeddingScale = gemma ? (float) Math.sqrt(dim) : 1f;
    if (family == ModelFamily.GRANITE) {
      embeddingScale = requireFloat(f, k + "embedding_scale", name);
      multipliers =
          new Multipliers(
              requireFloat(f, k + "attention.scale", name),
              requireFloat(f, k + "residual_scale", name),
              requireFloat(f, k + "logit_scale", name));
    }
    ModelConfig config =
        new ModelConfig(
            arch,
            dim,
            f.requireInt(k + "feed_forward_length"),
            layers,
            heads,
            kvHeads,
            headDim,
            tokenizer.vocabSize(),
            context,
            f.getFloat(k + "attention.layer_norm_rms_epsilon", 1e-5f),
            rope,
            bias,
            qkNorm,
            embeddingScale,
            gemma ? GatedActivation.GELU_TANH : GatedActivation.SILU,
            family.postNorms(),
            sliding,
            softCaps,
            multipliers);
    LlamaWeights weights = weights(f, config, name);
    weights.validate(config, name);
    return new LlamaModel(
        path.getFileName().toString(), config, weights, tokenizer, chatTemplate(f));
  }

  /**
   * Gemma 3's windowed layers, as llama.cpp reads them: a window from {@code
   * attention.sliding_window} (none: every layer global), every {@code
   * attention.sliding_window_pattern}-th layer global (default 6), and the windowed layers' rope
   * base {@code rope.freq_base_swa} (default 10,000) without the global layers' scaling.
   */
  private static SlidingWindow gemmaWindow(
      GgufFile f, String k, int window, RopeConfig rope, String name) {
    if (window <= 0) {
      return null;
    }
    Object pattern = f.get(k + "attention.sliding_window_pattern");
    int period = 6;
    if (pattern instanceof Number) {
      period = ((Number) pattern).intValue();
    } else if (pattern != null) {
      throw new ModelFormatException(
          name, "metadata " + k + "attention.sliding_window_pattern as a list is not supported");
    }
    float theta = f.getFloat(k + "rope.freq_base_swa", 10000f);
    return new SlidingWindow(window, period, new RopeConfig(rope.style(), theta, null));
  }

  /**
   * Gemma 2's windowed layers, as llama.cpp reads them: every other layer, from the first, attends
   * to the last {@code attention.sliding_window} positions (default 4,096), with the global layers'
   * rope.
   */
  private static SlidingWindow gemma2Window(GgufFile f, String k, RopeConfig rope, String name) {
    int window = f.getInt(k + "attention.sliding_window", 4096);
    Object pattern = f.get(k + "attention.sliding_window_pattern");
    if (window <= 0 || (pattern != null && !(pattern instanceof Number n && n.intValue() == 2))) {
      throw new ModelFormatException(
          name,
          "Gemma 2 windows every other layer: a window of "
              + window
              + " and a pattern of "
              + pattern
              + " are not supported");
    }
    return new SlidingWindow(window, 2, rope);
  }

  /**
   * The 27B Gemma 2 and 3 scale their queries by 1/sqrt(dim / heads), not by the head's width, as
   * llama.cpp reads them (by their layer counts, 46 and 62); null for the others.
   */
  private static Multipliers gemma27bQueryScale(boolean is27b, int dim, int heads, int headDim) {
    if (!is27b || dim / heads == headDim) {
      return null;
    }
    return new Multipliers(1f / (float) Math.sqrt(dim / heads), 1f, 1f);
  }

  /** A float the family requires (llama.cpp refuses a Granite file without its multipliers). */
  private static float requireFloat(GgufFile f, String key, String name) {
    float v = f.getFloat(key, Float.NaN);
    if (!(v > 0) || Float.isInfinite(v)) {
      throw new ModelFormatException(name, "metadata " + key + " must be a positive number: " + v);
    }
    return v;
  }

  /** The file's chat template, rendered with its own BOS and EOS texts, if it has one. */
  public static Optional<ChatTemplate> chatTemplate(GgufFile f) {
    String source = f.getString("tokenizer.chat_template", null);
    if (source == null || source.isBlank()) {
      return Optional.empty();
    }
    String[] tokens = (String[]) f.get("tokenizer.ggml.tokens");
    int bos = f.getInt("tokenizer.ggml.bos_token_id", -1);
    int eos = f.getInt("tokenizer.ggml.eos_token_id", -1);
    return Optional.of(
        new ChatTemplate(
            source,
            bos >= 0 && bos < tokens.length ? tokens[bos] : "",
            eos >= 0 && eos < tokens.length ? tokens[eos] : ""));
  }

  /** Every tensor must be one the forward pass reads: an unknown one would be silently unused. */
  private static void checkTensorNames(GgufFile f, String name) {
    for (String t : f.tensors().keySet()) {
      if (MODEL_TENSORS.contains(t)) {
        continue;
      }
      if (t.startsWith("blk.")) {
        int dot = t.indexOf('.', 4);
        if (dot > 0 && LAYER_TENSORS.contains(t.substring(dot + 1))) {
          continue;
        }
      }
      throw new ModelFormatException(
          name, "tensor " + t + " is not part of any forward pass Flinfer implements");
    }
  }

  private static RopeConfig rope(
      GgufFile f, String k, ModelFamily family, int headDim, String name) {
    float theta = f.getFloat(k + "rope.freq_base", 10000f);
    float[] factors = null;
    if (f.tensors().containsKey("rope_freqs.weight")) {
      factors = vector(f, "rope_freqs.weight");
    }
    String scaling = f.getString(k + "rope.scaling.type", "none");
    switch (scaling) {
      case "none":
        break;
      case "linear":
        {
          float factor = f.getFloat(k + "rope.scaling.factor", 1f);
          if (!(factor > 0)) {
            throw new ModelFormatException(name, "rope.scaling.factor must be positive");
          }
          if (factors == null) {
            factors = new float[headDim / 2];
            java.util.Arrays.fill(factors, 1f);
          }
          for (int i = 0; i < factors.length; i++) {
            factors[i] *= factor;
          }
          break;
        }
      default:
        throw new ModelFormatException(
            name, "metadata " + k + "rope.scaling.type = " + scaling + " is not supported");
    }
    return new RopeConfig(family.ropeStyle(), theta, factors);
  }

  private static LlamaWeights weights(GgufFile f, ModelConfig c, String name) {
    int layers = c.layers();
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
    float[][] bq = c.qkvBias() ? new float[layers][] : null;
    float[][] bk = c.qkvBias() ? new float[layers][] : null;
    float[][] bv = c.qkvBias() ? new float[layers][] : null;
    float[][] qNorm = c.qkNorm() ? new float[layers][] : null;
    float[][] kNorm = c.qkNorm() ? new float[layers][] : null;
    float[][] postAtt = c.postNorms() ? new float[layers][] : null;
    float[][] postFfn = c.postNorms() ? new float[layers][] : null;
    for (int l = 0; l < layers; l++) {
      String p = "blk." + l + ".";
      rmsAtt[l] = vector(f, p + "attn_norm.weight");
      rmsFfn[l] = vector(f, p + "ffn_norm.weight");
      if (f.tensors().containsKey(p + "attn_qkv.weight")) {
        // Fused projection: rows q, then k, then v.
        WeightMatrix[] qkv =
            parts(f, p + "attn_qkv.weight", "expected q + k + v", c.qDim(), c.kvDim(), c.kvDim());
        wq[l] = qkv[0];
        wk[l] = qkv[1];
        wv[l] = qkv[2];
      } else {
        wq[l] = matrix(f, p + "attn_q.weight");
        wk[l] = matrix(f, p + "attn_k.weight");
        wv[l] = matrix(f, p + "attn_v.weight");
      }
      wo[l] = matrix(f, p + "attn_output.weight");
      w2[l] = matrix(f, p + "ffn_down.weight");
      if (f.tensors().containsKey(p + "ffn_gate.weight")) {
        w1[l] = matrix(f, p + "ffn_gate.weight");
        w3[l] = matrix(f, p + "ffn_up.weight");
      } else {
        // Fused gate and up projections: rows gate, then up.
        WeightMatrix[] gateUp =
            parts(f, p + "ffn_up.weight", "and there is no ffn_gate", c.hiddenDim(), c.hiddenDim());
        w1[l] = gateUp[0];
        w3[l] = gateUp[1];
      }
      if (c.qkvBias()) {
        bq[l] = vector(f, p + "attn_q.bias");
        bk[l] = vector(f, p + "attn_k.bias");
        bv[l] = vector(f, p + "attn_v.bias");
      }
      if (c.qkNorm()) {
        qNorm[l] = vector(f, p + "attn_q_norm.weight");
        kNorm[l] = vector(f, p + "attn_k_norm.weight");
      }
      if (c.postNorms()) {
        postAtt[l] = vector(f, p + "post_attention_norm.weight");
        postFfn[l] = vector(f, p + "post_ffw_norm.weight");
      }
    }
    return new LlamaWeights(
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
        classifier,
        bq,
        bk,
        bv,
        qNorm,
        kNorm,
        postAtt,
        postFfn);
  }

  private static GgufFile.TensorInfo info(GgufFile f, String tensor) {
    GgufFile.TensorInfo t = f.tensors().get(tensor);
    if (t == null) {
      throw new ModelFormatException(f.path().toString(), "tensor " + tensor + " is missing");
    }
    return t;
  }

  private static WeightMatrix matrix(GgufFile f, String tensor) {
    GgufFile.TensorInfo t = matrixInfo(f, tensor);
    ByteBuffer data = f.map(t);
    return WeightMatrix.of(type(f, t, tensor), data, (int) t.dims()[1], (int) t.dims()[0]);
  }

  /**
   * A fused tensor cut into consecutive row ranges of the given sizes, each a matrix of its own
   * over the file's bytes; {@code whatElse} ends the error when the row counts do not add up.
   */
  private static WeightMatrix[] parts(GgufFile f, String tensor, String whatElse, int... counts) {
    GgufFile.TensorInfo t = matrixInfo(f, tensor);
    int rows = (int) t.dims()[1];
    int cols = (int) t.dims()[0];
    if (rows != java.util.Arrays.stream(counts).sum()) {
      throw new ModelFormatException(
          f.path().toString(), tensor + " has " + rows + " rows, " + whatElse);
    }
    GgmlType type = type(f, t, tensor);
    ByteBuffer data = f.map(t);
    WeightMatrix[] parts = new WeightMatrix[counts.length];
    int from = 0;
    for (int i = 0; i < counts.length; i++) {
      parts[i] = WeightMatrix.rowsOf(type, data, rows, cols, from, counts[i]);
      from += counts[i];
    }
    return parts;
  }

  private static GgufFile.TensorInfo matrixInfo(GgufFile f, String tensor) {
    GgufFile.TensorInfo t = info(f, tensor);
    if (t.dims().length != 2) {
      throw new ModelFormatException(f.path().toString(), "tensor " + tensor + " is not a matrix");
    }
    return t;
  }

  /** The tensor's element type; one this runtime does not read is a load error naming both. */
  private static GgmlType type(GgufFile f, GgufFile.TensorInfo t, String tensor) {
    GgmlType type = GgmlType.byId(t.typeId());
    if (type == null) {
      throw new ModelFormatException(
          f.path().toString(),
          "tensor "
              + tensor
              + " is of type "
              + GgmlType.nameOf(t.typeId())
              + ", which is not supported ("
              + java.util.Arrays.toString(GgmlType.values())
              + " are)");
    }
    return type;
  }

  private static float[] vector(GgufFile f, String tensor) {
    GgufFile.TensorInfo t = info(f, tensor);
    int n = (int) t.elements();
    float[] v = new float[n];
    WeightMatrix.of(type(f, t, tensor), f.map(t), 1, n).decodeRow(0, v, 0);
    return v;
  }

  /** For tests: the set of per-layer tensor names the loader reads. */
  static Set<String> layerTensorNames() {
    return new HashSet<>(LAYER_TENSORS);
  }
}
