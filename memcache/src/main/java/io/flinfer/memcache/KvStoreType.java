package io.flinfer.memcache;

/** How the KV pool stores each value: fp32, or a 16-bit type converted on write and read. */
public enum KvStoreType {
  FP32(4),
  FP16(2),
  BF16(2);

  private final int bytes;

  KvStoreType(int bytes) {
    this.bytes = bytes;
  }

  public int bytes() {
    return bytes;
  }
}
