package io.flinfer.runtime.cuda;

import io.flinfer.runtime.model.GatedActivation;
import io.flinfer.runtime.model.ModelConfig;

/**
 * Which neighbouring kernels of a layer a runner launches as one. Each fused kernel does what the
 * separate ones do, in the same order, so a token's bits are the same either way.
 *
 * @param qkvFinishInPost the q/k/v product's split-K partial sums are added by the kernel that
 *     applies rope and writes the KV cache, not by a reduction kernel of their own
 * @param normInOFinish the output projection's partial sums are added to the residual by the kernel
 *     that then computes the feed-forward RMS norm
 * @param normInDownFinish likewise for the down projection and the next layer's attention norm
 * @param swigluInProduct the gate/up product writes SwiGLU's result from its accumulators: its
 *     weights interleave gate and up rows by eights (see {@link #interleavedGateUpRow})
 */
record Fusions(
    boolean qkvFinishInPost,
    boolean normInOFinish,
    boolean normInDownFinish,
    boolean swigluInProduct) {

  static final Fusions NONE = new Fusions(false, false, false, false);

  /**
   * The fusions that apply to a model's shapes: the finishes only to products with several splits
   * and none when the product's own last split finishes ({@code fusedReduce}); SwiGLU only to an
   * unsplit gate/up product whose hidden width is a multiple of 8.
   */
  static Fusions choose(
      boolean enabled,
      boolean fusedReduce,
      ModelConfig c,
      GemmShape qkv,
      GemmShape o,
      GemmShape up,
      GemmShape down) {
    if (!enabled) {
      return NONE;
    }
    boolean finishes = !fusedReduce;
    // A post norm (Gemma 3) comes between a product's finish and the residual; GeGLU has no
    // epilogue in the product.
    boolean residual = finishes && !c.postNorms();
    return new Fusions(
        finishes && qkv.splits() > 1,
        residual && o.splits() > 1,
        residual && down.splits() > 1,
        up.splits() == 1 && c.hiddenDim() % 8 == 0 && c.activation() == GatedActivation.SILU);
  }

  /**
   * The row of the stacked [gate; up] matrix that device row {@code deviceRow} holds when they are
   * interleaved: in each group of 16 rows, eight gate rows and then the eight up rows of the same
   * hidden units, so that one m16n8k16 tile's accumulators hold both halves of its outputs.
   */
  static int interleavedGateUpRow(int deviceRow, int hidden) {
    int unit = deviceRow / 16 * 8 + deviceRow % 8;
    return deviceRow % 16 < 8 ? unit : hidden + unit;
  }
}
