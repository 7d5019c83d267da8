package io.flinfer.memcache;

import java.nio.ByteBuffer;

/**
 * One layer's keys or values in a {@link KvPool}: value {@code (slot * rowWidth + i)} of an array
 * in the pool's store type, fp32 in {@link #floats()}, fp16 or bf16 bits in {@link #halves()}, FP8
 * codes in {@link #bytes()} (a stored value is {@code code * scale}: SGLang's per-layer {@code
 * k_scale} / {@code v_scale}). Heap arrays rather than direct buffers: kernels that read a
 * request's rows scattered over the pool load them several times faster from an array.
 */
public final class KvRows {
  private final KvStoreType type;
  private final float[] floats;
  private final short[] halves;
  private final byte[] bytes;
  private final float scale;
  private final float inverseScale;

  KvRows(KvStoreType type, int values, float scale) {
    if (!(scale > 0) || Float.isInfinite(scale)) {
      throw new IllegalArgumentException("a KV scale must be positive and finite: " + scale);
    }
    this.type = type;
    this.floats = type == KvStoreType.FP32 ? new float[values] : null;
    this.halves = type.bytes() == 2 ? new short[values] : null;
    this.bytes = type.isFp8() ? new byte[values] : null;
    this.scale = scale;
    this.inverseScale = 1f / scale;
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

  /** The FP8 codes of an FP8 pool; null otherwise. */
  public byte[] bytes() {
    return bytes;
  }

  /** What an FP8 code is multiplied by (1 for the other types). */
  public float scale() {
    return scale;
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
      case BF16:
        for (int i = 0; i < count; i++) {
          halves[at + i] = HalfFloats.toBf16(src[off + i]);
        }
        break;
      case FP8_E4M3:
        for (int i = 0; i < count; i++) {
          bytes[at + i] = Fp8.toE4m3(src[off + i] * inverseScale);
        }
        break;
      default:
        for (int i = 0; i < count; i++) {
          bytes[at + i] = Fp8.toE5m2(src[off + i] * inverseScale);
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
      case BF16:
        for (int i = 0; i < count; i++) {
          dst[off + i] = HalfFloats.fromBf16(halves[at + i]);
        }
        break;
      case FP8_E4M3:
        for (int i = 0; i < count; i++) {
          dst[off + i] = Fp8.fromE4m3(bytes[at + i]) * scale;
        }
        break;
      default:
        for (int i = 0; i < count; i++) {
          dst[off + i] = Fp8.fromE5m2(bytes[at + i]) * scale;
        }
    }
  }

  /**
   * Puts {@code count} stored values from value {@code at} into {@code dst} as their raw bytes in
   * the store type (the buffer's byte order), advancing its position: what a lower tier keeps, so
   * that loading them back restores the very same values.
   */
  void readRaw(int at, int count, ByteBuffer dst) {
    int p = dst.position();
    switch (type) {
      case FP32:
        dst.asFloatBuffer().put(floats, at, count);
        break;
      case FP16:
      case BF16:
        dst.asShortBuffer().put(halves, at, count);
        break;
      default:
        dst.put(bytes, at, count);
        return;
    }
    dst.position(p + count * type.bytes());
  }

  /** Takes {@code count} values' raw bytes from {@code src} (as {@link #readRaw} put them). */
  void writeRaw(int at, int count, ByteBuffer src) {
    int p = src.position();
    switch (type) {
      case FP32:
        src.asFloatBuffer().get(floats, at, count);
        break;
      case FP16:
      case BF16:
        src.asShortBuffer().get(halves, at, count);
        break;
      default:
        src.get(bytes, at, count);
        return;
    }
    src.position(p + count * type.bytes());
  }
}
