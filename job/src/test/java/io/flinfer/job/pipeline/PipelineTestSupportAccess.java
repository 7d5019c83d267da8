package io.flinfer.job.pipeline;

import io.flinfer.operators.flink.ModelSource;

/** The pipeline tests' settings, for tests in other packages. */
public final class PipelineTestSupportAccess {
  private PipelineTestSupportAccess() {}

  public static PipelineSettings.Builder settings(String bootstrapServers, ModelSource model) {
    return PipelineTestSupport.settings(bootstrapServers, model, 200);
  }
}
