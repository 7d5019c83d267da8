package io.flinfer.runtime.cuda;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinfer.runtime.model.ModelConfig;
import io.flinfer.runtime.model.RopeConfig;
import io.flinfer.runtime.model.SlidingWindow;
import io.flinfer.runtime.testing.GemmaShapes;
import org.junit.jupiter.api.Test;

class CudaProbeTest {
  @Test
  void theDriverLoaderErrorBecomesOneLine() {
    UnsatisfiedLinkError e =
        new UnsatisfiedLinkError(
            "Error while loading native library JCudaDriver\nOperating system name: Linux\n"
                + "/tmp/libJCudaDriver.so: libcuda.so.1: cannot open shared object file");
    assertThat(CudaProbe.concise(e)).isEqualTo("no CUDA driver (libcuda.so.1 not found)");
    assertThat(CudaProbe.concise(new UnsatisfiedLinkError("first\nsecond")))
        .isEqualTo("no CUDA driver: first");
  }

  /**
   * Models of a head width the attention kernels lack are refused with the reason (auto: the CPU).
   */
  @Test
  void headWidthsWithoutAnAttentionKernelAreRefusedNamingThem() {
    RopeConfig rope = new RopeConfig(RopeConfig.Style.NEOX, 1e4f, null);
    assertThat(CudaModelRunner.unsupported(GemmaShapes.tiny(6, new SlidingWindow(128, 6, rope))))
        .isEmpty();
    assertThat(
            CudaModelRunner.unsupported(
                GemmaShapes.tiny(6, new SlidingWindow(128, 6, rope), 1, 256)))
        .isEmpty();
    assertThat(CudaModelRunner.unsupported(ModelConfig.llama110M())).isEmpty();
    assertThat(CudaModelRunner.unsupported(new ModelConfig(60, 120, 1, 2, 2, 100, 64, 1e4f, 1e-5f)))
        .hasValueSatisfying(why -> assertThat(why).contains("heads of 30"));
  }
}
