package io.flinfer.runtime.forward;

import io.flinfer.runtime.cuda.CudaModelRunner;
import io.flinfer.runtime.cuda.CudaProbe;
import java.util.Optional;

/**
 * Chooses a backend by name: {@code cpu}, {@code cuda}, or {@code auto} (CUDA when a device is
 * present).
 */
public final class ModelRunners {
  private ModelRunners() {}

  public static ModelRunnerFactory byName(String backend) {
    if (backend.startsWith("cuda:")) {
      int device = Integer.parseInt(backend.substring(5));
      byName("cuda"); // checks that CUDA is there
      return (model, kv, reqToToken, threads) ->
          new CudaModelRunner(model, kv, reqToToken, threads, device);
    }
    switch (backend) {
      case "cpu":
        return CpuModelRunner::new;
      case "cuda":
        {
          Optional<String> why = CudaProbe.unavailableReason();
          if (why.isPresent()) {
            throw new IllegalArgumentException("backend cuda is not available: " + why.get());
          }
          return CudaModelRunner::new;
        }
      case "auto":
        {
          Optional<String> why = CudaProbe.unavailableReason();
          if (why.isPresent()) {
            System.err.println("no CUDA device, using the CPU backend (" + why.get() + ")");
            return CpuModelRunner::new;
          }
          return CudaModelRunner::new;
        }
      default:
        throw new IllegalArgumentException("unknown backend " + backend + " (cpu, cuda or auto)");
    }
  }
}
