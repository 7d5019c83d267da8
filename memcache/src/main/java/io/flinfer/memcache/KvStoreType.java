package io.flinfer.memcache;

/**
 * How the KV pool stores each value: fp32, a 16-bit type, or an 8-bit float (with a per-layer
 * scale) converted on write and read.
 */
public enum KvStoreType {
  FP32(4),
  FP16(2),
  BF16(2),
  FP8_E4M3(1),
  FP8_E5M2(1);

  private final int bytes;

  KvStoreType(int bytes) {
    this.bytes = bytes;
  }

  public int bytes() {
    return bytes;
  }

  public boolean isFp8() {
    return this == FP8_E4M3 || this == FP8_E5M2;
  }
}
