package io.flinfer.runtime.forward;

import io.flinfer.runtime.cuda.CudaModelRunner;
import io.flinfer.runtime.cuda.CudaProbe;
import java.util.Optional;

/**
 * Chooses a backend by name: {@code cpu}, {@code cuda} (device 0), {@code cuda:N}, or {@code auto}
 * (CUDA when the probe says it can run here and its kernels serve the model, else the CPU, saying
 * why in one line). A CUDA backend that cannot run here is an argument error at once, not a failure
 * at the first step.
 */
public final class ModelRunners {
  private ModelRunners() {}

  public static ModelRunnerFactory byName(String backend) {
    if (backend.startsWith("cuda:")) {
      int device;
      try {
        device = Integer.parseInt(backend.substring(5));
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("backend " + backend + ": cuda:N takes a device number");
      }
      requireCuda();
      return (model, reqToToken, threads) ->
          new CudaModelRunner(model, reqToToken, threads, device);
    }
    switch (backend) {
      case "cpu":
        return CpuModelRunner::new;
      case "cuda":
        requireCuda();
        return CudaModelRunner::new;
      case "auto":
        {
          Optional<String> why = CudaProbe.unavailableReason();
          if (why.isPresent()) {
            System.err.println("using the CPU backend: " + why.get());
            return CpuModelRunner::new;
          }
          return (model, reqToToken, threads) -> {
            Optional<String> no = CudaModelRunner.unsupported(model.config());
            if (no.isPresent()) {
              System.err.println("using the CPU backend for " + model.id() + ": " + no.get());
              return new CpuModelRunner(model, reqToToken, threads);
            }
            return new CudaModelRunner(model, reqToToken, threads);
          };
        }
      default:
        throw new IllegalArgumentException(
            "unknown backend " + backend + " (cpu, cuda, cuda:N or auto)");
    }
  }

  private static void requireCuda() {
    Optional<String> why = CudaProbe.unavailableReason();
    if (why.isPresent()) {
      throw new IllegalArgumentException("backend cuda is not available: " + why.get());
    }
  }
}
