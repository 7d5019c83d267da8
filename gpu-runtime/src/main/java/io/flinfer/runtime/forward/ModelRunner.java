package io.flinfer.runtime.forward;

import io.flinfer.memcache.KvSlotBytes;
import io.flinfer.memcache.KvStoreType;
import io.flinfer.runtime.model.ModelConfig;
import java.util.List;

/**
 * A backend that runs forward passes over a {@link ForwardBatch}. It owns its KV storage (host
 * memory for the CPU, device memory for CUDA): the caller sizes it from {@link #memory()} and
 * {@link #allocateKv allocates} it once, then deals in slot indices only. The CPU and CUDA backends
 * implement it.
 */
public interface ModelRunner extends AutoCloseable {

  ModelConfig config();

  /** A short name for logs and benchmarks ("cpu", "cuda"). */
  String backendName();

  /**
   * Bytes of weights one step reads: every matrix once, the classifier included, the token
   * embedding only by the rows it gathers (not counted).
   */
  long weightBytesPerStep();

  /** The memory the KV cache is sized from, measured now: after the weights and workspace. */
  DeviceMemory memory();

  /**
   * The share of {@link #memory()}'s total that static state (weights, KV) may take when the
   * configuration leaves it open (SGLang's {@code mem_fraction_static}).
   */
  default double defaultMemFractionStatic() {
    return 0.5;
  }

  /** The KV store types this backend holds; the first is its default. */
  List<KvStoreType> kvStoreTypes();

  /**
   * Allocates the KV storage: {@code size} usable slots plus the padding page, in {@code type}.
   * Called once, before the first {@link #forward}.
   */
  void allocateKv(int size, int pageSize, KvStoreType type);

  /**
   * Runs one step. For each request, the logits of its last new token go to {@code out}: the full
   * row, or its greedy summary where the batch asked only for that. A request's logits depend only
   * on its own tokens, never on the rest of the batch.
   */
  void forward(ForwardBatch batch, Logits out);

  /**
   * Whether this backend hands the logits of positions before a request's last new token to the
   * batch's sink ({@link ForwardBatch#scorePositions}); one that does not never gets such a batch.
   */
  default boolean scoresPositions() {
    return false;
  }

  /**
   * The KV storage seen slot by slot as bytes, for the host tier to copy; null when this backend
   * cannot hand its KV to the host (no host tier then).
   */
  default KvSlotBytes kvSlotBytes() {
    return null;
  }

  @Override
  void close();
}
