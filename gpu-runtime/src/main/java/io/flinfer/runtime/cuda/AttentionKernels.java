package io.flinfer.runtime.cuda;

/** The attention kernels packaged: which head widths, their tile rows and shared memory. */
final class AttentionKernels {
  /** Positions per chunk of a split (the kernels' CH). */
  static final int CHUNK = 32;

  private static final int[] HEAD_DIMS = {8, 16, 32, 64, 96, 128, 256};

  private AttentionKernels() {}

  static boolean supportsHeadDim(int hd) {
    for (int d : HEAD_DIMS) {
      if (d == hd) {
        return true;
      }
    }
    return false;
  }

  /**
   * Query rows of the many-rows (extend) kernel for heads of {@code hd}: 64, 32 past 64, 16 past
   * 128 (Gemma 3's heads of 256), so that a thread keeps at most 32 values of a tile's rows.
   */
  static int manyRows(int hd) {
    return hd > 128 ? 16 : hd > 64 ? 32 : 64;
  }

  static String name(String type, int hd, int rows) {
    return "attention_" + type + "_d" + hd + "_r" + rows;
  }

  /**
   * Queries, a chunk of keys and values, scores (key and score rows padded by four floats), and
   * five floats and an int a row.
   */
  static int sharedBytes(int hd, int rows) {
    return 4 * (rows * hd + CHUNK * (hd + 4) + CHUNK * hd + rows * (CHUNK + 4) + 6 * rows);
  }
}
