package io.flinfer.operators.flink;

import java.util.Collection;
import org.apache.flink.api.common.externalresource.ExternalResourceInfo;

/**
 * Which backend an inference subtask runs on: the configured one, or with {@code auto} the GPU that
 * Flink's external resource framework assigned to the task's slot (resource {@code gpu}, its {@code
 * index} property), else whatever {@code auto} finds on the machine.
 */
final class SlotBackend {
  /** The external resource name that the cluster configures for GPUs. */
  static final String GPU_RESOURCE = "gpu";

  private SlotBackend() {}

  static String choose(String configured, Collection<ExternalResourceInfo> gpus) {
    if (!"auto".equals(configured)) {
      return configured;
    }
    for (ExternalResourceInfo gpu : gpus) {
      var index = gpu.getProperty("index");
      if (index.isPresent()) {
        return "cuda:" + index.get();
      }
    }
    return "auto";
  }
}
