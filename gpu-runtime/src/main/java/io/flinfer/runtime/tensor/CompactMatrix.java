package io.flinfer.runtime.tensor;

import io.flinfer.runtime.kernel.ActivationRounding;
import io.flinfer.runtime.kernel.CompactWeights;
import java.nio.ByteBuffer;

/**
 * A matrix in a compact form (quantized blocks, 16-bit floats), copied onto the heap once at load
 * where the heap has room ({@link HeapBudget}), else left in the mapped file: a token alone, and a
 * small batch where the heap form has a kernel for it, is multiplied by the heap copy's kernel,
 * converting in registers; other batches, and every product of a mapped matrix, go through rows
 * decoded once ({@link WeightMatrix#matmul}). All reduce in one order, so a token gets the same
 * bits wherever its weights live. Quantized matrices first round the activations as ggml does for
 * their type ({@link GgmlType#ggmlActivations}), unless {@code -Dflinfer.activations=f32}, so that
 * their logits follow llama.cpp's.
 */
abstract class CompactMatrix extends WeightMatrix {
  /** Reads a matrix's bytes into its heap form. */
  @FunctionalInterface
  interface Reader {
    CompactWeights read(ByteBuffer data, int rows, int cols);
  }

  /** Decodes a row straight from the mapped bytes, with the heap form's bits. */
  @FunctionalInterface
  interface MappedDecoder {
    void decode(ByteBuffer data, int cols, int row, float[] dst, int off);
  }

  /** The heap copy, or null where the heap had no room. */
  private final CompactWeights heap;

  private final MappedDecoder mapped;

  /**
   * The activations' rounding before this matrix's products (ggml's for its type, by default), as
   * configured when the matrix was built.
   */
  private final ActivationRounding rounding;

  CompactMatrix(ByteBuffer data, int rows, int cols, Reader heap, MappedDecoder mapped) {
    this(data, rows, cols, -1, heap, mapped);
  }

  /** {@code heapBytes}: what the heap form takes, where that is not the file's size (-1). */
  CompactMatrix(
      ByteBuffer data, int rows, int cols, long heapBytes, Reader heap, MappedDecoder mapped) {
    this(data, rows, cols, heapBytes, heap, mapped, null);
  }

  /**
   * {@code ggml}: ggml's rounding for the matrix's type where {@link #type} cannot answer yet
   * (subclasses that keep the type in a field), else null.
   */
  CompactMatrix(
      ByteBuffer data,
      int rows,
      int cols,
      long heapBytes,
      Reader heap,
      MappedDecoder mapped,
      ActivationRounding ggml) {
    super(data, rows, cols);
    long size = heapBytes < 0 ? this.data.remaining() : heapBytes;
    this.heap = HeapBudget.admits(size) ? heap.read(this.data, rows, cols) : null;
    this.mapped = mapped;
    this.rounding = (ggml != null ? ggml : type().ggmlActivations()).asConfigured();
  }

  @Override
  public ActivationRounding activationRounding() {
    return rounding;
  }

  @Override
  public void matmulRounded(
      float[] x, int tokens, float[] out, int outStride, int oFrom, int oTo, float[] scratch) {
    if (tokens == 1 && heap != null) {
      heap.multiplyToken(x, out, oFrom, oTo, scratch);
    } else if (heap == null
        || !heap.multiplyTokens(x, tokens, out, outStride, oFrom, oTo, scratch)) {
      super.matmulRounded(x, tokens, out, outStride, oFrom, oTo, scratch);
    }
  }

  /** The heap copy, or null where the heap had no room. */
  protected final CompactWeights heap() {
    return heap;
  }

  @Override
  public void decodeRow(int row, float[] dst, int off) {
    if (heap != null) {
      heap.decodeRow(row, dst, off);
    } else {
      mapped.decode(data, cols, row, dst, off);
    }
  }
}
