package io.flinfer.memcache;

/**
 * One layer's keys or values in a {@link KvPool}: value {@code (slot * rowWidth + i)} of an array
 * in the pool's store type, fp32 in {@link #floats()}, fp16 or bf16 bits in {@link #halves()}. Heap
 * arrays rather than direct buffers: kernels that read a request's rows scattered over the pool
 * load them several times faster from an array.
 */
public final class KvRows {
  private final KvStoreType type;
  private final float[] floats;
  private final short[] halves;

  KvRows(KvStoreType type, int values) {
    this.type = type;
    this.floats = type == KvStoreType.FP32 ? new float[values] : null;
    this.halves = type == KvStoreType.FP32 ? null : new short[values];
  }

  public KvStoreType type() {
    return type;
  }

  /** The values of an fp32 pool; null otherwise. */
  public float[] floats() {
    return floats;
  }

  /** The 16-bit values of an fp16 or bf16 pool; null otherwise. */
  public short[] halves() {
    return halves;
  }

  /** Stores {@code count} floats from {@code src[off..]} at value {@code at}. */
  void write(int at, float[] src, int off, int count) {
    switch (type) {
      case FP32:
        System.arraycopy(src, off, floats, at, count);
        break;
      case FP16:
        for (int i = 0; i < count; i++) {
          halves[at + i] = HalfFloats.toHalf(src[off + i]);
        }
        break;
      default:
        for (int i = 0; i < count; i++) {
          halves[at + i] = HalfFloats.toBf16(src[off + i]);
        }
    }
  }

  /** Reads {@code count} values from value {@code at} into {@code dst[off..]} as floats. */
  void read(int at, int count, float[] dst, int off) {
    switch (type) {
      case FP32:
        System.arraycopy(floats, at, dst, off, count);
        break;
      case FP16:
        for (int i = 0; i < count; i++) {
          dst[off + i] = HalfFloats.fromHalf(halves[at + i]);
        }
        break;
      default:
        for (int i = 0; i < count; i++) {
          dst[off + i] = HalfFloats.fromBf16(halves[at + i]);
        }
    }
  }
}
