package io.flinfer.runtime.cuda;

import jcuda.Pointer;
import jcuda.driver.CUdeviceptr;

/**
 * A kernel's parameter block, built once: device pointers (null for a null pointer), ints and
 * floats in the kernel's order. Launches reuse it, so a step allocates no argument arrays.
 */
final class KernelArgs {
  private KernelArgs() {}

  static Pointer of(Object... args) {
    Pointer[] ps = new Pointer[args.length];
    for (int i = 0; i < args.length; i++) {
      Object a = args[i];
      if (a == null) {
        ps[i] = Pointer.to(new CUdeviceptr());
      } else if (a instanceof CUdeviceptr) {
        ps[i] = Pointer.to((CUdeviceptr) a);
      } else if (a instanceof Integer) {
        ps[i] = Pointer.to(new int[] {(Integer) a});
      } else if (a instanceof Float) {
        ps[i] = Pointer.to(new float[] {(Float) a});
      } else {
        throw new IllegalArgumentException("kernel argument of type " + a.getClass());
      }
    }
    return Pointer.to(ps);
  }
}
