package io.flinfer.runtime.forward;

/**
 * Takes the logits a forward step computed at a position before a request's last new token (see
 * {@link ForwardBatch#scorePositions}): what prompt log-probabilities are read from. The row is the
 * backend's scratch, valid only during the call.
 */
@FunctionalInterface
public interface PositionLogits {

  /**
   * The logits at request {@code r}'s new token {@code i} (0: its first in this step), at {@code
   * row[off .. off + vocab)}.
   */
  void accept(int r, int i, float[] row, int off);
}
