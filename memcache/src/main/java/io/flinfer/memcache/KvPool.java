package io.flinfer.memcache;

/**
 * The KV pool: for each layer, the keys and values of every KV slot, laid out [slot][kv head][head
 * dim] (SGLang's {@code MHATokenToKVPool}). Owns that memory. Grouped query attention is expressed
 * by {@code kvHeads} being fewer than the model's query heads.
 *
 * <p>Row 0 is the padding slot; rows {@code 1..size} are the slots the allocator hands out.
 */
public final class KvPool {
  private final int size;
  private final int layers;
  private final int kvHeads;
  private final int headDim;
  private final int rowWidth;
  private final float[][] k;
  private final float[][] v;

  public KvPool(int size, int layers, int kvHeads, int headDim, int pageSize) {
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
    if (rows * rowWidth > Integer.MAX_VALUE - 8) {
      throw new IllegalArgumentException(
          "KV pool layer too large for one array: " + rows + " slots x " + rowWidth + " floats");
    }
    this.size = size;
    this.layers = layers;
    this.kvHeads = kvHeads;
    this.headDim = headDim;
    this.k = new float[layers][(int) (rows * rowWidth)];
    this.v = new float[layers][(int) (rows * rowWidth)];
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

  /** Floats per slot in one layer: kvHeads x headDim. */
  public int rowWidth() {
    return rowWidth;
  }

  /** Stores one token's K and V (each {@link #rowWidth()} floats) at {@code slot}. */
  public void setKv(int layer, int slot, float[] kSrc, int kOff, float[] vSrc, int vOff) {
    System.arraycopy(kSrc, kOff, k[layer], slot * rowWidth, rowWidth);
    System.arraycopy(vSrc, vOff, v[layer], slot * rowWidth, rowWidth);
  }

  /** The keys of one layer, [slot][kv head][head dim], for attention kernels. */
  public float[] keys(int layer) {
    return k[layer];
  }

  /** The values of one layer, [slot][kv head][head dim], for attention kernels. */
  public float[] values(int layer) {
    return v[layer];
  }
}
