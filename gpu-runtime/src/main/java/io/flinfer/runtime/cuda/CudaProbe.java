package io.flinfer.runtime.cuda;

import java.util.Optional;
import jcuda.driver.CUcontext;
import jcuda.driver.CUdevice;
import jcuda.driver.CUdevice_attribute;
import jcuda.driver.CUmodule;
import jcuda.driver.CUresult;
import jcuda.driver.JCudaDriver;

/**
 * Tells once whether the CUDA backend can run here: a driver, a device of compute capability 8.0 or
 * newer (the kernels use bf16 tensor-core instructions and asynchronous copies), and a driver that
 * loads the packaged kernel image, which is tried. Without a driver, JCuda's first call throws
 * {@link UnsatisfiedLinkError} and every later one {@link NoClassDefFoundError}, so the answer is
 * probed once, catching {@link LinkageError}, and remembered.
 */
public final class CudaProbe {
  static final int MIN_MAJOR = 8;

  private static volatile Optional<String> unavailable;

  private CudaProbe() {}

  public static boolean available() {
    return unavailableReason().isEmpty();
  }

  /** Why the CUDA backend cannot run here, or empty when it can. */
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

  /** Why a device of compute capability {@code major.minor} cannot run the kernels, if so. */
  static Optional<String> capabilityProblem(int major, int minor) {
    if (major < MIN_MAJOR) {
      return Optional.of(
          "compute capability "
              + major
              + "."
              + minor
              + " is below "
              + MIN_MAJOR
              + ".0 (the kernels need bf16 tensor cores)");
    }
    return Optional.empty();
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
      CUdevice dev = new CUdevice();
      JCudaDriver.cuDeviceGet(dev, 0);
      int[] major = new int[1];
      int[] minor = new int[1];
      JCudaDriver.cuDeviceGetAttribute(
          major, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
      JCudaDriver.cuDeviceGetAttribute(
          minor, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
      Optional<String> cc = capabilityProblem(major[0], minor[0]);
      if (cc.isPresent()) {
        return cc;
      }
      return loadsKernels(dev);
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

  /** Loads the packaged kernels in a throw-away context: the only sure test of the driver. */
  private static Optional<String> loadsKernels(CUdevice dev) {
    byte[] image;
    try {
      image = CudaContext.image();
    } catch (IllegalStateException e) {
      return Optional.of(e.getMessage());
    }
    CUcontext ctx = new CUcontext();
    int r = JCudaDriver.cuCtxCreate(ctx, 0, dev);
    if (r != CUresult.CUDA_SUCCESS) {
      return Optional.of("cannot create a CUDA context: " + CUresult.stringFor(r));
    }
    try {
      CUmodule module = new CUmodule();
      r = JCudaDriver.cuModuleLoadData(module, image);
      if (r != CUresult.CUDA_SUCCESS) {
        int[] version = new int[1];
        JCudaDriver.cuDriverGetVersion(version);
        return Optional.of(
            "the driver (CUDA "
                + version[0] / 1000
                + "."
                + version[0] % 1000 / 10
                + ") cannot load the packaged kernels: "
                + CUresult.stringFor(r));
      }
      JCudaDriver.cuModuleUnload(module);
      return Optional.empty();
    } finally {
      JCudaDriver.cuCtxDestroy(ctx);
    }
  }

  /** Fails with the probe's reason unless the backend can run. */
  static void require() {
    unavailableReason()
        .ifPresent(
            reason -> {
              throw new IllegalStateException("CUDA backend unavailable: " + reason);
            });
  }
}
