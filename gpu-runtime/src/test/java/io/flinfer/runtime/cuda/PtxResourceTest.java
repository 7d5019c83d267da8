package io.flinfer.runtime.cuda;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** The build compiled the kernels to PTX and packaged them where the runner loads them. */
class PtxResourceTest {
  @Test
  void everyKernelIsInThePackagedPtx() throws Exception {
    try (InputStream in = CudaModelRunner.class.getResourceAsStream(CudaModelRunner.PTX)) {
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
}
