package io.flinfer.runtime.cuda;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinfer.runtime.model.GatedActivation;
import io.flinfer.runtime.model.ModelConfig;
import io.flinfer.runtime.model.RopeConfig;
import java.util.HashSet;
import java.util.Set;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

class FusionsTest {

  /**
   * Every stacked row lands on exactly one device row, and in each 16-row tile the accumulator rows
   * r and r + 8 (what one thread holds) are the gate and up rows of one hidden unit.
   */
  @Property
  void interleavingPairsEachUnitsGateAndUpRowsInOneTile(
      @ForAll @IntRange(min = 1, max = 600) int units) {
    int hidden = 8 * units;
    Set<Integer> seen = new HashSet<>();
    for (int d = 0; d < 2 * hidden; d++) {
      int src = Fusions.interleavedGateUpRow(d, hidden);
      assertThat(src).isBetween(0, 2 * hidden - 1);
      assertThat(seen.add(src)).as("device row %d", d).isTrue();
      if (d % 16 < 8) {
        int unit = src;
        assertThat(unit).isLessThan(hidden);
        assertThat(Fusions.interleavedGateUpRow(d + 8, hidden)).isEqualTo(hidden + unit);
        // The kernel's unit index for this tile row: (row >> 4) * 8 + row % 16.
        assertThat(unit).isEqualTo((d >> 4) * 8 + d % 16);
      }
    }
  }

  @Test
  void llamaShapesFuseEverythingThatIsSplitAndSwigluWhereTheGateUpProductIsNot() {
    ModelConfig llama8b = new ModelConfig(4096, 14336, 32, 32, 8, 128256, 8192, 5e5f, 1e-5f);
    Fusions f = choose(true, false, llama8b);
    // Llama-3.1-8B: q/k/v, o and down are split, gate/up (28,672 rows) is not.
    assertThat(f).isEqualTo(new Fusions(true, true, true, true));
    assertThat(choose(false, false, llama8b)).isEqualTo(Fusions.NONE);
    // With the product's last split finishing, only SwiGLU is left to fuse.
    assertThat(choose(true, true, llama8b)).isEqualTo(new Fusions(false, false, false, true));
  }

  @Test
  void smallModelsWithoutSplitsFuseOnlySwiglu() {
    ModelConfig tiny = new ModelConfig(64, 172, 5, 8, 4, 512, 512, 1e4f, 1e-5f);
    // 172 is not a multiple of 8: the gate/up rows cannot be interleaved by eights.
    assertThat(choose(true, false, tiny)).isEqualTo(Fusions.NONE);
    ModelConfig small = new ModelConfig(64, 176, 5, 8, 4, 512, 512, 1e4f, 1e-5f);
    assertThat(choose(true, false, small)).isEqualTo(new Fusions(false, false, false, true));
  }

  /**
   * Gemma 3's post norms come between the o and down products' finishes and the residual, and GeGLU
   * has no product epilogue: of Llama-3.1-8B's fusions only the q/k/v finish is left.
   */
  @Test
  void postNormsAndGegluKeepTheirKernelsApart() {
    ModelConfig gemmaShaped =
        new ModelConfig(
            "gemma3",
            4096,
            14336,
            32,
            32,
            8,
            128,
            128256,
            8192,
            1e-6f,
            new RopeConfig(RopeConfig.Style.NEOX, 1e6f, null),
            false,
            true,
            64f,
            GatedActivation.GELU_TANH,
            true,
            null,
            null,
            null);
    assertThat(choose(true, false, gemmaShaped)).isEqualTo(new Fusions(true, false, false, false));
  }

  private static Fusions choose(boolean enabled, boolean fusedReduce, ModelConfig c) {
    return Fusions.choose(
        enabled,
        fusedReduce,
        c,
        GemmShape.of(c.qDim() + 2 * c.kvDim(), c.dim()),
        GemmShape.of(c.dim(), c.qDim()),
        GemmShape.of(2 * c.hiddenDim(), c.dim()),
        GemmShape.of(c.dim(), c.hiddenDim()));
  }
}
