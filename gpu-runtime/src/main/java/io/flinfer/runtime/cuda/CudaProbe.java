package io.flinfer.runtime.cuda;

import java.util.Optional;
import jcuda.driver.CUresult;
import jcuda.driver.JCudaDriver;

/**
 * Tells once whether a CUDA device can be used. Without a driver, JCuda's first call throws {@link
 * UnsatisfiedLinkError} and every later one {@link NoClassDefFoundError}, so the answer is probed
 * once, catching {@link LinkageError}, and remembered.
 */
public final class CudaProbe {
  private static volatile Optional<String> unavailable;

  private CudaProbe() {}

  public static boolean available() {
    return unavailableReason().isEmpty();
  }

  /** Why no CUDA device can be used, or empty when one can. */
  public static synchronized Optional<String> unavailableReason() {
    if (unavailable == null) {
      unavailable = probe();
    }
    return unavailable;
  }

  /** JCuda's loader error runs to many lines; the cause fits in one. */
  static String concise(Throwable e) {
    String m = String.valueOf(e.getMessage());
    if (m.contains("libcuda.so")) {
      return "no CUDA driver (libcuda.so.1 not found)";
    }
    int nl = m.indexOf('\n');
    return "no CUDA driver: " + (nl > 0 ? m.substring(0, nl) : m);
  }

  private static Optional<String> probe() {
    try {
      JCudaDriver.setExceptionsEnabled(false);
      int r = JCudaDriver.cuInit(0);
      if (r != CUresult.CUDA_SUCCESS) {
        return Optional.of("cuInit failed: " + CUresult.stringFor(r));
      }
      int[] count = new int[1];
      r = JCudaDriver.cuDeviceGetCount(count);
      if (r != CUresult.CUDA_SUCCESS || count[0] == 0) {
        return Optional.of(
            "no CUDA device (" + CUresult.stringFor(r) + ", " + count[0] + " devices)");
      }
      return Optional.empty();
    } catch (LinkageError e) {
      return Optional.of(concise(e));
    } finally {
      try {
        JCudaDriver.setExceptionsEnabled(true);
      } catch (LinkageError ignored) {
        // no driver: nothing to configure
      }
    }
  }
}
