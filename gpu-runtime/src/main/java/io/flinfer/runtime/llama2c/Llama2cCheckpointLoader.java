package io.flinfer.runtime.llama2c;

import io.flinfer.runtime.kernel.VectorApiSupport;
import io.flinfer.runtime.model.LlamaModel;
import io.flinfer.runtime.model.LlamaWeights;
import io.flinfer.runtime.model.ModelConfig;
import io.flinfer.runtime.model.ModelFormatException;
import io.flinfer.runtime.tensor.GgmlType;
import io.flinfer.runtime.tensor.WeightMatrix;
import io.flinfer.runtime.tokenizer.Llama2cTokenizerReader;
import io.flinfer.runtime.tokenizer.Tokenizer;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.function.IntFunction;

/**
 * Loads llama2.c checkpoints: seven int32 header fields (dim, hidden dim, layers, heads, kv heads,
 * vocab, context), then float32 weights. A negative vocab means the classifier is stored after the
 * weights; otherwise it shares the token embedding.
 */
public final class Llama2cCheckpointLoader {
  private static final int HEADER_BYTES = 28;

  private Llama2cCheckpointLoader() {}

  public static LlamaModel load(Path checkpoint, Path tokenizer) {
    return load(checkpoint, vocab -> Llama2cTokenizerReader.read(tokenizer, vocab));
  }

  /** Loads the weights, taking the tokenizer from {@code tokenizerFor(vocabSize)}. */
  public static LlamaModel load(Path checkpoint, IntFunction<Tokenizer> tokenizerFor) {
    VectorApiSupport.require();
    String name = checkpoint.toString();
    try (FileChannel ch = FileChannel.open(checkpoint, StandardOpenOption.READ)) {
      long size = ch.size();
      if (size < HEADER_BYTES) {
        throw new ModelFormatException(
            name, "truncated: " + size + " bytes is shorter than the header");
      }
      ByteBuffer h = ByteBuffer.allocate(HEADER_BYTES).order(ByteOrder.LITTLE_ENDIAN);
      ch.read(h, 0);
      h.flip();
      int dim = h.getInt();
      int hidden = h.getInt();
      int layers = h.getInt();
      int heads = h.getInt();
      int kvHeads = h.getInt();
      int vocab = h.getInt();
      int seqLen = h.getInt();
      boolean shared = vocab > 0;
      vocab = Math.abs(vocab);
      ModelConfig config;
      try {
        config = new ModelConfig(dim, hidden, layers, heads, kvHeads, vocab, seqLen, 10000f, 1e-5f);
      } catch (IllegalArgumentException e) {
        throw new ModelFormatException(name, "not a llama2.c checkpoint: " + e.getMessage(), e);
      }
      long kvDim = config.kvDim();
      long expected =
          4L
              * ((long) vocab * dim
                  + (long) layers
                      * (2L * dim + 2L * dim * dim + 2L * kvDim * dim + 3L * dim * hidden)
                  + dim
                  + (long) seqLen * config.headDim()
                  + (shared ? 0 : (long) vocab * dim));
      if (size - HEADER_BYTES < expected) {
        throw new ModelFormatException(
            name,
            "truncated or shapes do not add up: the header "
                + config
                + " needs "
                + (expected + HEADER_BYTES)
                + " bytes, the file has "
                + size);
      }
      Cursor c = new Cursor(ch, HEADER_BYTES);
      WeightMatrix embedding = c.matrix(vocab, dim);
      float[][] rmsAtt = c.vectors(layers, dim);
      WeightMatrix[] wq = c.matrices(layers, dim, dim);
      WeightMatrix[] wk = c.matrices(layers, config.kvDim(), dim);
      WeightMatrix[] wv = c.matrices(layers, config.kvDim(), dim);
      WeightMatrix[] wo = c.matrices(layers, dim, dim);
      float[][] rmsFfn = c.vectors(layers, dim);
      WeightMatrix[] w1 = c.matrices(layers, hidden, dim);
      WeightMatrix[] w2 = c.matrices(layers, dim, hidden);
      WeightMatrix[] w3 = c.matrices(layers, hidden, dim);
      float[] rmsFinal = c.vectors(1, dim)[0];
      c.skip(4L * seqLen * config.headDim()); // legacy freq_cis_real and freq_cis_imag
      WeightMatrix classifier = shared ? embedding : c.matrix(vocab, dim);
      LlamaWeights weights =
          new LlamaWeights(
              embedding, rmsAtt, wq, wk, wv, wo, rmsFfn, w1, w2, w3, rmsFinal, classifier);
      Tokenizer tok = tokenizerFor.apply(vocab);
      if (tok.vocabSize() != vocab) {
        throw new ModelFormatException(
            name, "the tokenizer has " + tok.vocabSize() + " tokens, the model " + vocab);
      }
      return new LlamaModel(checkpoint.getFileName().toString(), config, weights, tok);
    } catch (IOException e) {
      throw new ModelFormatException(name, "cannot read: " + e.getMessage(), e);
    }
  }

  /** Walks the file, mapping one tensor at a time (each mapping stays under 2 GiB). */
  private static final class Cursor {
    private final FileChannel ch;
    private long pos;

    Cursor(FileChannel ch, long pos) {
      this.ch = ch;
      this.pos = pos;
    }

    WeightMatrix matrix(int rows, int cols) throws IOException {
      long bytes = 4L * rows * cols;
      ByteBuffer b = ch.map(FileChannel.MapMode.READ_ONLY, pos, bytes);
      pos += bytes;
      return WeightMatrix.of(GgmlType.F32, b, rows, cols);
    }

    WeightMatrix[] matrices(int n, int rows, int cols) throws IOException {
      WeightMatrix[] m = new WeightMatrix[n];
      for (int i = 0; i < n; i++) {
        m[i] = matrix(rows, cols);
      }
      return m;
    }

    float[][] vectors(int n, int len) throws IOException {
      float[][] v = new float[n][len];
      ByteBuffer b = ByteBuffer.allocate(4 * n * len).order(ByteOrder.LITTLE_ENDIAN);
      ch.read(b, pos);
      b.flip();
      for (int i = 0; i < n; i++) {
        b.asFloatBuffer().position(i * len).get(v[i]);
      }
      pos += 4L * n * len;
      return v;
    }

    void skip(long bytes) {
      pos += bytes;
    }
  }
}
