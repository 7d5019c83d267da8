package io.flinfer.runtime.cuda;

import static org.assertj.core.api.Assertions.assertThat;

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
}
