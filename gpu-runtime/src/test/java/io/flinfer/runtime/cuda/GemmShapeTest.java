package io.flinfer.runtime.cuda;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

/**
 * The K split of a product follows the matrix's shape alone and covers its columns exactly; the
 * kernel variants' shared memory and split-tile counters fit.
 */
class GemmShapeTest {

  @Property
  void splitsCoverThePaddedColumnsInWholeTiles(
      @ForAll @IntRange(min = 1, max = 200_000) int rows,
      @ForAll @IntRange(min = 1, max = 30_000) int cols) {
    GemmShape g = GemmShape.of(rows, cols);
    assertThat(g.paddedCols() % 64).isZero();
    assertThat(g.paddedCols()).isBetween(cols, cols + 63);
    assertThat(g.colsPerSplit() % 64).isZero();
    assertThat(g.splits()).isBetween(1, GemmShape.MAX_SPLITS);
    assertThat((long) g.splits() * g.colsPerSplit()).isGreaterThanOrEqualTo(g.paddedCols());
    assertThat((long) (g.splits() - 1) * g.colsPerSplit()).isLessThan(g.paddedCols());
    assertThat(GemmShape.of(rows, cols)).isEqualTo(g);
  }

  @Test
  void matricesWithFewRowsAreSplitSoOneTokenFillsTheDevice() {
    // Llama 3.1 8B: q/k/v stacked (6144 rows), o and down (4096), gate/up (28672), classifier.
    assertThat(GemmShape.of(6144, 4096).splits()).isEqualTo(3);
    assertThat(GemmShape.of(4096, 4096).splits()).isEqualTo(4);
    assertThat(GemmShape.of(4096, 14336).splits()).isEqualTo(4);
    assertThat(GemmShape.of(28672, 4096).splits()).isEqualTo(1);
    assertThat(GemmShape.of(128256, 4096).splits()).isEqualTo(1);
    // stories260K's narrow matrices cannot be split into 256-column pieces.
    assertThat(GemmShape.of(512, 64).splits()).isEqualTo(1);
    assertThat(GemmShape.of(64, 172).paddedCols()).isEqualTo(192);
  }

  @Test
  void theKernelVariantFollowsTheTokenCount() {
    assertThat(GemmShape.variant(1)).isEqualTo("s8");
    assertThat(GemmShape.variant(9)).isEqualTo("s16");
    assertThat(GemmShape.variant(64)).isEqualTo("s64");
    assertThat(GemmShape.variant(65)).isEqualTo("l");
    assertThat(GemmShape.sharedBytes("l")).isEqualTo(61440);
    assertThat(GemmShape.sharedBytes("s64")).isLessThanOrEqualTo(227 * 1024);
    // Two blocks of the widest one-to-eight-token kernel fit an H100 multiprocessor's 228 KB.
    assertThat(GemmShape.sharedBytes("s8k256")).isLessThanOrEqualTo(113 * 1024);
    assertThat(GemmShape.VARIANTS).containsAll(GemmShape.FEW_TOKEN_VARIANTS);
    assertThat(GemmShape.VARIANTS).containsAll(GemmShape.LARGE_VARIANTS);
    for (String v : GemmShape.LARGE_VARIANTS) {
      // Every large kernel fits a multiprocessor; the 128-token ones twice.
      int perBlock = GemmShape.tileTokens(v) == 128 ? 113 * 1024 : 227 * 1024;
      assertThat(GemmShape.sharedBytes(v)).as(v).isLessThanOrEqualTo(perBlock);
      assertThat(GemmShape.tileRows(v)).isEqualTo(128);
    }
    assertThat(GemmShape.threads("l")).isEqualTo(128);
    assertThat(GemmShape.threads("l8w")).isEqualTo(256);
  }

  @Property
  void everySplitTileHasACounter(
      @ForAll @IntRange(min = 1, max = 200_000) int rows,
      @ForAll @IntRange(min = 1, max = 30_000) int cols,
      @ForAll @IntRange(min = 1, max = 4096) int tokens) {
    GemmShape g = GemmShape.of(rows, cols);
    for (String v : GemmShape.VARIANTS) {
      long gx = (rows + GemmShape.tileRows(v) - 1) / GemmShape.tileRows(v);
      long gy = (tokens + GemmShape.tileTokens(v) - 1) / GemmShape.tileTokens(v);
      assertThat(gx * gy)
          .isLessThanOrEqualTo(g.splits() == 1 ? Long.MAX_VALUE : g.splitTiles(tokens));
    }
    assertThat(g.splitTiles(tokens) == 0).isEqualTo(g.splits() == 1);
  }

  @Test
  void theFewTokenKernelIsOneOfItsVariants() {
    assertThat(CudaModelRunner.fewTokenVariant()).isEqualTo("s8k256");
    System.setProperty("flinfer.cuda.gemv", "s9");
    try {
      assertThatThrownBy(CudaModelRunner::fewTokenVariant)
          .hasMessageContaining("flinfer.cuda.gemv must be one of [s8, s8k128, s8k256], not s9");
    } finally {
      System.clearProperty("flinfer.cuda.gemv");
    }
  }

  @Test
  void theLargeKernelIsOneOfItsVariants() {
    assertThat(CudaModelRunner.largeVariant()).isEqualTo("l8k64");
    System.setProperty("flinfer.cuda.gemm", "l9");
    try {
      assertThatThrownBy(CudaModelRunner::largeVariant)
          .hasMessageContaining(
              "flinfer.cuda.gemm must be one of [l, l8w, l8k64, l8n256, l8n256k64], not l9");
    } finally {
      System.clearProperty("flinfer.cuda.gemm");
    }
  }
}
