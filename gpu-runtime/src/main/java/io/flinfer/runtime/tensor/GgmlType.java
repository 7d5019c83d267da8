package io.flinfer.runtime.tensor;

import io.flinfer.runtime.kernel.ActivationRounding;

/** The tensor element types this runtime reads, with GGML's type ids and block sizes. */
public enum GgmlType {
  F32(0, 1, 4),
  F16(1, 1, 2),
  Q4_0(2, 32, 18),
  Q4_1(3, 32, 20),
  Q5_0(6, 32, 22),
  Q5_1(7, 32, 24),
  Q8_0(8, 32, 34),
  Q2_K(10, 256, 84),
  Q3_K(11, 256, 110),
  IQ4_NL(20, 32, 18),
  IQ4_XS(23, 256, 136),
  Q4_K(12, 256, 144),
  Q5_K(13, 256, 176),
  Q6_K(14, 256, 210),
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

  /**
   * How ggml's CPU backend rounds the activations it multiplies with this type (its {@code
   * vec_dot_type}): {@code q8_0} for the 32-value formats, {@code q8_1} for those with offsets
   * (Q4_1, Q5_1), {@code q8_K} for the 256-value ones, the weights' own type for 16-bit floats,
   * none for F32.
   */
  public ActivationRounding ggmlActivations() {
    switch (this) {
      case F32:
        return ActivationRounding.NONE;
      case F16:
        return ActivationRounding.F16;
      case BF16:
        return ActivationRounding.BF16;
      case Q4_0:
      case Q5_0:
      case Q8_0:
      case IQ4_NL:
        return ActivationRounding.Q8_0;
      case Q4_1:
      case Q5_1:
        return ActivationRounding.Q8_1;
      default:
        return ActivationRounding.Q8_K;
    }
  }

  /** Bytes of {@code elements} values; they must fill whole blocks. */
  public long bytes(long elements) {
    if (elements % blockSize != 0) {
      throw new IllegalArgumentException(
          this + " needs a multiple of " + blockSize + " elements, got " + elements);
    }
    return elements / blockSize * blockBytes;
  }

  /** GGML's names of the type ids this runtime does not read, for error messages. */
  private static final String[] OTHER_NAMES = {
    "F32", "F16", "Q4_0", "Q4_1", "Q4_2", "Q4_3", "Q5_0", "Q5_1", "Q8_0", "Q8_1", "Q2_K", "Q3_K",
    "Q4_K", "Q5_K", "Q6_K", "Q8_K", "IQ2_XXS", "IQ2_XS", "IQ3_XXS", "IQ1_S", "IQ4_NL", "IQ3_S",
    "IQ2_S", "IQ4_XS", "I8", "I16", "I32", "I64", "F64", "IQ1_M", "BF16"
  };

  /** GGML's name of type id {@code id} (or the number, for one it does not name either). */
  public static String nameOf(int id) {
    return id >= 0 && id < OTHER_NAMES.length ? OTHER_NAMES[id] : "#" + id;
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
