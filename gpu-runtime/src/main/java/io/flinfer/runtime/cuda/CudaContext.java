package io.flinfer.runtime.cuda;

import static jcuda.driver.JCudaDriver.cuCtxCreate;
import static jcuda.driver.JCudaDriver.cuCtxDestroy;
import static jcuda.driver.JCudaDriver.cuCtxSetCurrent;
import static jcuda.driver.JCudaDriver.cuDeviceGet;
import static jcuda.driver.JCudaDriver.cuDeviceGetAttribute;
import static jcuda.driver.JCudaDriver.cuFuncSetAttribute;
import static jcuda.driver.JCudaDriver.cuInit;
import static jcuda.driver.JCudaDriver.cuMemAlloc;
import static jcuda.driver.JCudaDriver.cuMemAllocHost;
import static jcuda.driver.JCudaDriver.cuMemFree;
import static jcuda.driver.JCudaDriver.cuMemFreeHost;
import static jcuda.driver.JCudaDriver.cuMemGetInfo;
import static jcuda.driver.JCudaDriver.cuMemsetD8;
import static jcuda.driver.JCudaDriver.cuModuleGetFunction;
import static jcuda.driver.JCudaDriver.cuModuleLoadData;
import static jcuda.driver.JCudaDriver.cuStreamCreate;
import static jcuda.driver.JCudaDriver.cuStreamDestroy;

import io.flinfer.runtime.forward.DeviceMemory;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import jcuda.Pointer;
import jcuda.driver.CUcontext;
import jcuda.driver.CUdevice;
import jcuda.driver.CUdevice_attribute;
import jcuda.driver.CUdeviceptr;
import jcuda.driver.CUfunction;
import jcuda.driver.CUfunction_attribute;
import jcuda.driver.CUmodule;
import jcuda.driver.CUstream;
import jcuda.driver.JCudaDriver;

/**
 * One device as the runner uses it: a context, a stream, the packaged kernels, and every allocation
 * (device and pinned host), freed together on {@link #close}.
 */
final class CudaContext implements AutoCloseable {
  /** The kernels, as machine code for sm_80 and sm_90 plus PTX for newer devices. */
  static final String FATBIN = "/cuda/flinfer_kernels.fatbin";

  private final CUcontext context = new CUcontext();
  private final CUstream stream = new CUstream();
  private final CUmodule module = new CUmodule();
  private final Map<String, CUfunction> functions = new HashMap<>();
  private final Map<CUdeviceptr, Long> device = new IdentityHashMap<>();
  private final List<Pointer> pinned = new ArrayList<>();
  private final int multiprocessors;

  CudaContext(int deviceIndex) {
    JCudaDriver.setExceptionsEnabled(true);
    cuInit(0);
    CUdevice dev = new CUdevice();
    cuDeviceGet(dev, deviceIndex);
    cuCtxCreate(context, 0, dev);
    cuStreamCreate(stream, 0);
    cuModuleLoadData(module, image());
    int[] v = new int[1];
    cuDeviceGetAttribute(v, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
    multiprocessors = v[0];
  }

  /**
   * The kernel image: the packaged one, or the file named by {@code flinfer.cuda.image} (the same
   * source built by a toolkit the device's driver accepts when the driver predates the packager's).
   */
  static byte[] image() {
    String file = System.getProperty("flinfer.cuda.image");
    if (file != null) {
      try {
        return Files.readAllBytes(Path.of(file));
      } catch (IOException e) {
        throw new IllegalStateException("cannot read the kernel image " + file, e);
      }
    }
    try (InputStream in = CudaContext.class.getResourceAsStream(FATBIN)) {
      if (in == null) {
        throw new IllegalStateException("kernel image " + FATBIN + " is missing from the jar");
      }
      return in.readAllBytes();
    } catch (IOException e) {
      throw new IllegalStateException("cannot read " + FATBIN, e);
    }
  }

  CUstream stream() {
    return stream;
  }

  int multiprocessors() {
    return multiprocessors;
  }

  void makeCurrent() {
    cuCtxSetCurrent(context);
  }

  CUfunction function(String name) {
    return functions.computeIfAbsent(
        name,
        n -> {
          CUfunction f = new CUfunction();
          cuModuleGetFunction(f, module, n);
          return f;
        });
  }

  /** Lets {@code f} use {@code bytes} of dynamic shared memory (past the 48 KB default). */
  void allowSharedMemory(CUfunction f, int bytes) {
    cuFuncSetAttribute(
        f, CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes);
  }

  /** Device memory, zero-filled. */
  CUdeviceptr alloc(long bytes) {
    CUdeviceptr p = new CUdeviceptr();
    long b = Math.max(bytes, 16);
    cuMemAlloc(p, b);
    cuMemsetD8(p, (byte) 0, b);
    device.put(p, b);
    return p;
  }

  void free(CUdeviceptr p) {
    if (p != null && device.remove(p) != null) {
      cuMemFree(p);
    }
  }

  /** Page-locked host memory, for asynchronous copies. */
  Pointer allocHost(long bytes) {
    Pointer p = new Pointer();
    cuMemAllocHost(p, Math.max(bytes, 16));
    pinned.add(p);
    return p;
  }

  void freeHost(Pointer p) {
    if (p != null && pinned.remove(p)) {
      cuMemFreeHost(p);
    }
  }

  DeviceMemory memory() {
    long[] free = new long[1];
    long[] total = new long[1];
    cuMemGetInfo(free, total);
    return new DeviceMemory(total[0], Math.min(free[0], total[0]));
  }

  @Override
  public void close() {
    cuCtxSetCurrent(context);
    for (CUdeviceptr p : device.keySet()) {
      cuMemFree(p);
    }
    device.clear();
    for (Pointer p : pinned) {
      cuMemFreeHost(p);
    }
    pinned.clear();
    cuStreamDestroy(stream);
    cuCtxDestroy(context);
  }
}
