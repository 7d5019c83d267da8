package io.flinfer.runtime.kernel;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class VectorApiSupportTest {
  @Test
  void thisJvmHasTheCallsTheKernelsMake() {
    // CI runs JDK 17, whose Vector API reads byte buffers, and JDK 25, whose reads memory segments.
    assertThatCode(VectorApiSupport::require).doesNotThrowAnyException();
  }

  @Test
  void aVectorApiWithoutBufferOrSegmentLoadsIsRefusedWithTheReason() {
    assertThatThrownBy(() -> VectorApiSupport.require(Object.class))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("Object has neither fromByteBuffer (JDK 17, 18)")
        .hasMessageContaining("fromMemorySegment (JDK 19 and later)");
  }
}
