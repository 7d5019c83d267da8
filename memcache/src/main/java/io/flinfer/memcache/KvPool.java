package io.flinfer.memcache;

import java.nio.ByteBuffer;

/**
 * The KV pool: for each layer, the keys and values of every KV slot, laid out [slot][kv head][head
 * dim] in heap arrays (SGLang's {@code MHATokenToKVPool}). Owns them. Grouped-query attention is
 * expressed by {@code kvHeads} being fewer than the model's query heads. Values are stored as fp32,
 * or as fp16 / bf16 / FP8 (E4M3 or E5M2, with per-layer key and value scales) converted on write
 * and read.
 *
 * <p>Rows {@code 0 .. pageSize-1} are the padding page; the allocator hands out the others.
 */
public final class KvPool implements KvSlotBytes {
  private final int size;
  private final int layers;
  private final int kvHeads;
  private final int headDim;
  private final int rowWidth;
  private final KvStoreType storeType;
  private final KvRows[] k;
  private final KvRows[] v;

  public KvPool(int size, int layers, int kvHeads, int headDim, int pageSize) {
    this(size, layers, kvHeads, headDim, pageSize, KvStoreType.FP32);
  }

  public KvPool(
      int size, int layers, int kvHeads, int headDim, int pageSize, KvStoreType storeType) {
    this(size, layers, kvHeads, headDim, pageSize, storeType, 1f, 1f);
  }

  /**
   * @param kScale what stored FP8 keys are multiplied by, in every layer (1 for other types)
   * @param vScale the same for values
   */
  public KvPool(
      int size,
      int layers,
      int kvHeads,
      int headDim,
      int pageSize,
      KvStoreType storeType,
      float kScale,
      float vScale) {
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
    long layerValues = rows * rowWidth;
    if (layerValues > Integer.MAX_VALUE - 8) {
      throw new IllegalArgumentException(
          "one layer of keys would hold "
              + layerValues
              + " values ("
              + rows
              + " slots x "
              + rowWidth
              + "); at most 2^31 per layer");
    }
    this.size = size;
    this.layers = layers;
    this.kvHeads = kvHeads;
    this.headDim = headDim;
    this.storeType = storeType;
    this.k = new KvRows[layers];
    this.v = new KvRows[layers];
    try {
      for (int l = 0; l < layers; l++) {
        k[l] = new KvRows(storeType, (int) layerValues, kScale);
        v[l] = new KvRows(storeType, (int) layerValues, vScale);
      }
    } catch (OutOfMemoryError e) {
      throw new KvPoolSizingException(
          "cannot allocate the KV pool: "
              + layers
              + " layers x 2 x "
              + layerValues * storeType.bytes()
              + " bytes = "
              + 2L * layers * layerValues * storeType.bytes()
              + " bytes of heap (raise -Xmx or lower the pool size)",
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
    k[layer].write(slot * rowWidth, kSrc, kOff, rowWidth);
    v[layer].write(slot * rowWidth, vSrc, vOff, rowWidth);
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
    k[layer].read(slot * rowWidth + from, count, dst, off);
  }

  public void readValues(int layer, int slot, int from, int count, float[] dst, int off) {
    v[layer].read(slot * rowWidth + from, count, dst, off);
  }

  /** The keys of one layer, [slot][kv head][head dim] in {@link #storeType()}. */
  public KvRows keys(int layer) {
    return k[layer];
  }

  /** The values of one layer, laid out as {@link #keys}. */
  public KvRows values(int layer) {
    return v[layer];
  }

  @Override
  public int slotBytes() {
    return (int) cellSizeBytes(layers, kvHeads, headDim, storeType.bytes());
  }

  @Override
  public void readSlot(int slot, ByteBuffer dst) {
    for (int l = 0; l < layers; l++) {
      k[l].readRaw(slot * rowWidth, rowWidth, dst);
      v[l].readRaw(slot * rowWidth, rowWidth, dst);
    }
  }

  @Override
  public void writeSlot(int slot, ByteBuffer src) {
    for (int l = 0; l < layers; l++) {
      k[l].writeRaw(slot * rowWidth, rowWidth, src);
      v[l].writeRaw(slot * rowWidth, rowWidth, src);
    }
  }
}
