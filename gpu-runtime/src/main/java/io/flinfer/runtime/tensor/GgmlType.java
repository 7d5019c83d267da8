package io.flinfer.runtime.tensor;

/** The tensor element types this runtime reads, with GGML's type ids and block sizes. */
public enum GgmlType {
  F32(0, 1, 4),
  F16(1, 1, 2),
  Q4_0(2, 32, 18),
  Q8_0(8, 32, 34),
  BF16(30, 1, 2);

  private final int id;
  private final int blockSize;
  private final int blockBytes;

  GgmlType(int id, int blockSize, int blockBytes) {
    this.id = id;
    this.blockSize = blockSize;
    this.blockBytes = blockBytes;
  }

  public int id() {
    return id;
  }

  public int blockSize() {
    return blockSize;
  }

  /** Bytes of {@code elements} values; they must fill whole blocks. */
  public long bytes(long elements) {
    if (elements % blockSize != 0) {
      throw new IllegalArgumentException(
          this + " needs a multiple of " + blockSize + " elements, got " + elements);
    }
    return elements / blockSize * blockBytes;
  }

  /** The type with GGML id {@code id}, or null if this runtime does not read it. */
  public static GgmlType byId(int id) {
    for (GgmlType t : values()) {
      if (t.id == id) {
        return t;
      }
    }
    return null;
  }
}
