package io.flinfer.runtime.cuda;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** The build compiled the kernels to PTX and packaged them where the runner loads them. */
class PtxResourceTest {
  @Test
  void everyKernelIsInThePackagedPtx() throws Exception {
    try (InputStream in = CudaModelRunner.class.getResourceAsStream(CudaModelRunner.PTX)) {
      assumeTrue(
          in != null || !nvccOnPath(), "nvcc is not installed, so the build skipped the PTX");
      assertThat(in).as("PTX resource " + CudaModelRunner.PTX).isNotNull();
      String ptx = new String(in.readAllBytes(), StandardCharsets.US_ASCII);
      assertThat(ptx).contains(".version 9.0", ".target sm_80");
      for (String kernel :
          new String[] {
            "embedding", "rmsnorm", "matmul", "rope", "kv_store", "attention", "swiglu", "add"
          }) {
        assertThat(ptx).contains(".entry " + kernel + "(");
      }
    }
  }

  private static boolean nvccOnPath() {
    for (String dir : System.getenv().getOrDefault("PATH", "").split(java.io.File.pathSeparator)) {
      if (java.nio.file.Files.isExecutable(java.nio.file.Path.of(dir, "nvcc"))) {
        return true;
      }
    }
    return false;
  }
}
