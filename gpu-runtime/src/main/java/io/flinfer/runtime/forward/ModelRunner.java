package io.flinfer.runtime.forward;

import io.flinfer.runtime.model.ModelConfig;

/**
 * A backend that runs forward passes over a {@link ForwardBatch}, writing K/V into the KV pool it
 * was built with. The CPU and CUDA backends implement it.
 */
public interface ModelRunner extends AutoCloseable {

  ModelConfig config();

  /**
   * Runs one step. Writes the logits of each request's last new token to {@code logits[r * vocab
   * ..]}. A request's logits depend only on its own tokens, never on the rest of the batch.
   */
  void forward(ForwardBatch batch, float[] logits);

  /** A short name for logs and benchmarks ("cpu", "cuda"). */
  String backendName();

  @Override
  void close();
}
