package io.flinfer.memcache;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The KV pool: for each layer, the keys and values of every KV slot, laid out [slot][kv head][head
 * dim] in off-heap memory (SGLang's {@code MHATokenToKVPool}). Owns that memory. Grouped-query
 * attention is expressed by {@code kvHeads} being fewer than the model's query heads. Values are
 * stored as fp32, or as fp16 / bf16 converted on write and read.
 *
 * <p>Rows {@code 0 .. pageSize-1} are the padding page; the allocator hands out the others.
 */
public final class KvPool {
  private final int size;
  private final int layers;
  private final int kvHeads;
  private final int headDim;
  private final int rowWidth;
  private final KvStoreType storeType;
  private final ByteBuffer[] k;
  private final ByteBuffer[] v;

  public KvPool(int size, int layers, int kvHeads, int headDim, int pageSize) {
    this(size, layers, kvHeads, headDim, pageSize, KvStoreType.FP32);
  }

  public KvPool(
      int size, int layers, int kvHeads, int headDim, int pageSize, KvStoreType storeType) {
    if (size <= 0 || layers <= 0 || kvHeads <= 0 || headDim <= 0 || pageSize <= 0) {
      throw new IllegalArgumentException(
          "KV pool dimensions must be positive: size="
              + size
              + " layers="
              + layers
              + " kvHeads="
              + kvHeads
              + " headDim="
              + headDim
              + " pageSize="
              + pageSize);
    }
    long rows = (long) size + pageSize;
    this.rowWidth = kvHeads * headDim;
    long layerBytes = rows * rowWidth * storeType.bytes();
    if (layerBytes > Integer.MAX_VALUE) {
      throw new IllegalArgumentException(
          "one layer of keys would take "
              + layerBytes
              + " bytes ("
              + rows
              + " slots x "
              + rowWidth
              + " values x "
              + storeType.bytes()
              + " bytes); at most 2 GiB per layer");
    }
    this.size = size;
    this.layers = layers;
    this.kvHeads = kvHeads;
    this.headDim = headDim;
    this.storeType = storeType;
    this.k = new ByteBuffer[layers];
    this.v = new ByteBuffer[layers];
    try {
      for (int l = 0; l < layers; l++) {
        k[l] = ByteBuffer.allocateDirect((int) layerBytes).order(ByteOrder.nativeOrder());
        v[l] = ByteBuffer.allocateDirect((int) layerBytes).order(ByteOrder.nativeOrder());
      }
    } catch (OutOfMemoryError e) {
      throw new KvPoolSizingException(
          "cannot allocate the KV pool: "
              + layers
              + " layers x 2 x "
              + layerBytes
              + " bytes = "
              + 2L * layers * layerBytes
              + " bytes of direct memory (raise -XX:MaxDirectMemorySize or lower the pool size)",
          e);
    }
  }

  /** Bytes per token over all layers, keys and values: the unit of KV sizing. */
  public static long cellSizeBytes(int layers, int kvHeads, int headDim, int elementBytes) {
    return (long) layers * kvHeads * headDim * 2L * elementBytes;
  }

  public int size() {
    return size;
  }

  public int layers() {
    return layers;
  }

  public int kvHeads() {
    return kvHeads;
  }

  public int headDim() {
    return headDim;
  }

  public KvStoreType storeType() {
    return storeType;
  }

  /** Values per slot in one layer: kvHeads x headDim. */
  public int rowWidth() {
    return rowWidth;
  }

  /** Stores one token's K and V (each {@link #rowWidth()} floats) at {@code slot}. */
  public void setKv(int layer, int slot, float[] kSrc, int kOff, float[] vSrc, int vOff) {
    write(k[layer], slot, kSrc, kOff);
    write(v[layer], slot, vSrc, vOff);
  }

  /**
   * Stores the K and V of {@code count} tokens at slots {@code locs[from..]}: token i's values are
   * at {@code k[i * rowWidth ..]} and {@code v[i * rowWidth ..]}.
   */
  public void setKv(int layer, int[] locs, int from, int count, float[] kSrc, float[] vSrc) {
    for (int i = 0; i < count; i++) {
      setKv(layer, locs[from + i], kSrc, i * rowWidth, vSrc, i * rowWidth);
    }
  }

  /** Reads {@code count} values of a slot's keys, starting at value {@code from}. */
  public void readKeys(int layer, int slot, int from, int count, float[] dst, int off) {
    read(k[layer], slot, from, count, dst, off);
  }

  public void readValues(int layer, int slot, int from, int count, float[] dst, int off) {
    read(v[layer], slot, from, count, dst, off);
  }

  /** The keys of one layer, [slot][kv head][head dim] in {@link #storeType()}, native order. */
  public ByteBuffer keys(int layer) {
    return k[layer];
  }

  /** The values of one layer, laid out as {@link #keys}. */
  public ByteBuffer values(int layer) {
    return v[layer];
  }

  private void write(ByteBuffer b, int slot, float[] src, int off) {
    int base = slot * rowWidth;
    switch (storeType) {
      case FP32:
        for (int i = 0; i < rowWidth; i++) {
          b.putFloat((base + i) * 4, src[off + i]);
        }
        break;
      case FP16:
        for (int i = 0; i < rowWidth; i++) {
          b.putShort((base + i) * 2, HalfFloats.toHalf(src[off + i]));
        }
        break;
      default:
        for (int i = 0; i < rowWidth; i++) {
          b.putShort((base + i) * 2, HalfFloats.toBf16(src[off + i]));
        }
    }
  }

  private void read(ByteBuffer b, int slot, int from, int count, float[] dst, int off) {
    int base = slot * rowWidth + from;
    switch (storeType) {
      case FP32:
        for (int i = 0; i < count; i++) {
          dst[off + i] = b.getFloat((base + i) * 4);
        }
        break;
      case FP16:
        for (int i = 0; i < count; i++) {
          dst[off + i] = HalfFloats.fromHalf(b.getShort((base + i) * 2));
        }
        break;
      default:
        for (int i = 0; i < count; i++) {
          dst[off + i] = HalfFloats.fromBf16(b.getShort((base + i) * 2));
        }
    }
  }
}
