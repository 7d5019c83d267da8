package io.flinfer.runtime.forward;

import io.flinfer.memcache.KvStoreType;
import io.flinfer.runtime.model.ModelConfig;
import java.util.List;

/** A runner that hands every call to another: the base for runners that watch or delay steps. */
public abstract class ForwardingModelRunner implements ModelRunner {
  protected final ModelRunner delegate;

  protected ForwardingModelRunner(ModelRunner delegate) {
    this.delegate = delegate;
  }

  @Override
  public ModelConfig config() {
    return delegate.config();
  }

  @Override
  public String backendName() {
    return delegate.backendName();
  }

  @Override
  public long weightBytesPerStep() {
    return delegate.weightBytesPerStep();
  }

  @Override
  public DeviceMemory memory() {
    return delegate.memory();
  }

  @Override
  public double defaultMemFractionStatic() {
    return delegate.defaultMemFractionStatic();
  }

  @Override
  public List<KvStoreType> kvStoreTypes() {
    return delegate.kvStoreTypes();
  }

  @Override
  public void allocateKv(int size, int pageSize, KvStoreType type) {
    delegate.allocateKv(size, pageSize, type);
  }

  @Override
  public boolean scoresPositions() {
    return delegate.scoresPositions();
  }

  @Override
  public void forward(ForwardBatch batch, Logits out) {
    delegate.forward(batch, out);
  }

  @Override
  public void close() {
    delegate.close();
  }
}
