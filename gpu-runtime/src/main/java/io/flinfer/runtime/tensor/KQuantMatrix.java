package io.flinfer.runtime.tensor;

import io.flinfer.runtime.kernel.ActivationRounding;
import io.flinfer.runtime.kernel.KQuantDots;
import io.flinfer.runtime.kernel.KQuantWeights;
import io.flinfer.runtime.kernel.Q8KActivations;
import java.nio.ByteBuffer;

/**
 * A K-quant matrix (Q4_K, Q5_K, Q6_K, and Q3_K, IQ4_XS and Q2_K through their heap forms). By
 * default its products take the activations rounded as ggml's {@code q8_K} rounds them ({@link
 * ActivationRounding}) and multiply them in floats, as every compact matrix's do ({@link
 * CompactMatrix}). With {@code -Dflinfer.kquant.activations=q8} when it is built, it multiplies as
 * ggml does, in integers: each token's activations are quantized to 8 bits per 256 values ({@link
 * Q8KActivations}) and every output sums integer dot products per super-block ({@link
 * io.flinfer.runtime.kernel.KQuantDots}); a token alone streams the packed blocks once (faster than
 * the float kernel), a batch goes through rows decoded once per tile (slower than the float batch:
 * hence not the default). A token's outputs depend on that token alone either way, so they have the
 * same bits alone, in any batch and in any slice of rows, from the heap copy or from the mapped
 * file.
 */
abstract class KQuantMatrix extends CompactMatrix {
  /** Bytes of rows a tile holds, so that they stay in the core's cache while every token passes. */
  private static final int TILE_BYTES = 16 * 1024;

  /**
   * Values of a batch's tile decoded to floats (4 bytes each), kept in the core's second-level
   * cache.
   */
  private static final int TILE_VALUES = 16 * 1024;

  private static final boolean QUAD_TILES = KQuantWeights.quadTiles();

  private static final ThreadLocal<float[]> DECODED = ThreadLocal.withInitial(() -> new float[0]);

  /** The system property that selects the 8-bit activations, and its value that does. */
  static final String ACTIVATIONS = "flinfer.kquant.activations";

  private final KQuantWeights.Format format;
  private final ThreadLocal<KQuantWeights> mappedRows;
  private final boolean q8Activations;

  KQuantMatrix(
      KQuantWeights.Format format,
      ByteBuffer data,
      int rows,
      int cols,
      Reader heap,
      MappedDecoder mapped) {
    this(format, KQuantWeights.Source.OWN, data, rows, cols, heap, mapped);
  }

  /** {@code source}: the file blocks the heap form is read from. */
  KQuantMatrix(
      KQuantWeights.Format format,
      KQuantWeights.Source source,
      ByteBuffer data,
      int rows,
      int cols,
      Reader heap,
      MappedDecoder mapped) {
    super(
        data,
        rows,
        cols,
        (long) rows * (cols / KQuants.SUPER) * format.heapBytesPerBlock(),
        heap,
        mapped,
        ActivationRounding.Q8_K);
    this.format = format;
    this.mappedRows = ThreadLocal.withInitial(() -> KQuantWeights.scratch(format, source, cols));
    String activations = System.getProperty(ACTIVATIONS, "f32");
    if (!activations.equals("f32") && !activations.equals("q8")) {
      throw new IllegalArgumentException(ACTIVATIONS + " must be f32 or q8, not " + activations);
    }
    // Q2_K has no 8-bit activation kernels: it keeps float activations either way.
    this.q8Activations = activations.equals("q8") && format != KQuantWeights.Format.Q2_K;
  }

  private static final ThreadLocal<KQuantWeights[][]> ROW =
      ThreadLocal.withInitial(
          () ->
              new KQuantWeights[KQuantWeights.Format.values().length]
                  [KQuantWeights.Source.values().length]);

  /**
   * Row {@code row} of mapped {@code source} blocks decoded through the heap {@code format}, one
   * row at a time in this thread's scratch: the heap copy's bits.
   */
  static void decodeThroughHeapForm(
      KQuantWeights.Format format,
      KQuantWeights.Source source,
      ByteBuffer data,
      int cols,
      int row,
      float[] dst,
      int off) {
    KQuantWeights[] rows = ROW.get()[format.ordinal()];
    KQuantWeights w = rows[source.ordinal()];
    if (w == null || w.cols() != cols) {
      w = KQuantWeights.scratch(format, source, cols);
      rows[source.ordinal()] = w;
    }
    w.fill(data, row, 1).decodeRow(0, dst, off);
  }

  private static float[] decoded(int n) {
    float[] d = DECODED.get();
    if (d.length < n) {
      d = new float[n];
      DECODED.set(d);
    }
    return d;
  }

  /** The integer kernels quantize the activations themselves, from the values as they come. */
  @Override
  public ActivationRounding activationRounding() {
    return q8Activations ? ActivationRounding.NONE : super.activationRounding();
  }

  @Override
  public void matmulRounded(
      float[] x, int tokens, float[] out, int outStride, int oFrom, int oTo, float[] scratch) {
    if (!q8Activations) {
      super.matmulRounded(x, tokens, out, outStride, oFrom, oTo, scratch);
      return;
    }
    Q8KActivations a = Q8KActivations.ofThisThread();
    a.quantize(x, tokens, cols);
    KQuantWeights heap = (KQuantWeights) heap();
    int rowBytes = (int) (type().bytes(cols));
    // One token reads each row once, straight from its blocks; a batch decodes a tile of rows to
    // integer-valued floats once and takes every token through it. Both sums of a super-block are
    // exact integers: the same bits.
    int tile = Math.max(1, tokens == 1 ? TILE_BYTES / rowBytes : TILE_VALUES / cols);
    if (tokens > 1 && QUAD_TILES) {
      // Whole four-row tiles, at least one, however long the rows.
      tile = Math.max(4, tile - tile % 4);
    }
    int span = cols / KQuants.SUPER * KQuantDots.SPAN;
    float[] decoded = tokens == 1 ? null : decoded(tile * span);
    KQuantWeights mapped = heap != null ? null : mappedRows.get();
    int[][] sums = tokens == 1 ? null : (heap != null ? heap : mapped).tileScratch();
    for (int o0 = oFrom; o0 < oTo; o0 += tile) {
      int n = Math.min(tile, oTo - o0);
      KQuantWeights w = heap != null ? heap : mapped.fill(data, o0, n);
      int first = heap != null ? o0 : 0;
      if (tokens == 1) {
        for (int i = 0; i < n; i++) {
          out[o0 + i] = w.dot(first + i, a, 0);
        }
        continue;
      }
      for (int i = 0; i < n; i++) {
        w.decodeScaled(first + i, decoded, i * span);
      }
      int i = 0;
      for (; QUAD_TILES && i + 4 <= n; i += 4) {
        for (int t = 0; t < tokens; t += 4) {
          w.multiplyDecoded(
              sums,
              first + i,
              4,
              decoded,
              i * span,
              a,
              t,
              Math.min(4, tokens - t),
              out,
              outStride,
              o0 + i);
        }
      }
      for (; i < n; i += 2) {
        int rows = Math.min(2, n - i);
        for (int t = 0; t < tokens; t += 3) {
          w.multiplyDecoded(
              sums,
              first + i,
              rows,
              decoded,
              i * span,
              a,
              t,
              Math.min(3, tokens - t),
              out,
              outStride,
              o0 + i);
        }
      }
    }
  }
}
