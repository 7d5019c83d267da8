package io.flinfer.runtime.cuda;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** For device tests: skips, with the probe's reason, where the CUDA backend cannot run. */
final class CudaDevice {
  private CudaDevice() {}

  static void assume() {
    assumeTrue(
        CudaProbe.available(),
        () -> "needs a CUDA device: " + CudaProbe.unavailableReason().orElse(""));
  }

  /** max |a - b| / max |a| over a row of logits. */
  static double maxRel(float[] reference, float[] actual) {
    double scale = 0;
    double err = 0;
    for (int i = 0; i < reference.length; i++) {
      scale = Math.max(scale, Math.abs(reference[i]));
      err = Math.max(err, Math.abs(reference[i] - actual[i]));
    }
    return err / scale;
  }
}
