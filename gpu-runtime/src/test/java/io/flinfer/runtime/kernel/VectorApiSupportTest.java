package io.flinfer.runtime.kernel;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class VectorApiSupportTest {
  @Test
  void thisJvmHasTheCallsTheKernelsMake() {
    // CI runs JDK 17, whose Vector API reads byte buffers.
    assertThatCode(VectorApiSupport::require).doesNotThrowAnyException();
  }

  @Test
  void aVectorApiWithoutByteBufferLoadsIsRefusedWithTheReason() {
    assertThatThrownBy(() -> VectorApiSupport.require(Object.class))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("JDK 17 or 18")
        .hasMessageContaining("fromByteBuffer");
  }
}
