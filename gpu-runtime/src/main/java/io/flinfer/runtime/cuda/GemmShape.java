package io.flinfer.runtime.cuda;

import java.util.List;

/**
 * How the device computes one weight matrix's product: its padded width and its K split. The split
 * depends on the matrix's shape alone, never on the batch, so a token's outputs are summed the same
 * way whatever else is in its step (a split that followed the batch would change bits). Matrices
 * with few rows are split so that even a one-token step has work for every multiprocessor; each
 * split keeps at least 256 columns.
 *
 * @param rows output features (M)
 * @param paddedCols columns padded to a multiple of 64 (Kp)
 * @param splits how many K ranges are summed separately, then in order
 * @param colsPerSplit columns per split, a multiple of 64
 */
record GemmShape(int rows, int paddedCols, int splits, int colsPerSplit) {
  /** Rows per tile of the few-token kernels. */
  static final int TILE_ROWS = 64;

  /** Tiles a one-token product should have at least (about two per multiprocessor of an H100). */
  static final int TARGET_TILES = 256;

  static final int MAX_SPLITS = 4;

  static GemmShape of(int rows, int cols) {
    if (rows <= 0 || cols <= 0) {
      throw new IllegalArgumentException("matrix " + rows + "x" + cols);
    }
    int kp = padded(cols);
    int tiles = (rows + TILE_ROWS - 1) / TILE_ROWS;
    int splits = (TARGET_TILES + tiles - 1) / tiles;
    splits = Math.max(1, Math.min(Math.min(splits, MAX_SPLITS), kp / 256));
    int per = padded((kp + splits - 1) / splits);
    splits = (kp + per - 1) / per;
    return new GemmShape(rows, kp, splits, per);
  }

  /** {@code cols} rounded up to a multiple of 64. */
  static int padded(int cols) {
    return (cols + 63) / 64 * 64;
  }

  /**
   * Output tiles of a split product over {@code tokens} tokens, at most (the smallest tiles: 64
   * rows by 8 tokens): one counter each tells a tile's last split to add the partial sums.
   */
  long splitTiles(int tokens) {
    return splits == 1 ? 0 : (long) ((rows + TILE_ROWS - 1) / TILE_ROWS) * ((tokens + 7) / 8);
  }

  /** Floats of split-K workspace for {@code tokens} tokens (0 without splits). */
  long workspaceFloats(int tokens) {
    return splits == 1 ? 0 : (long) splits * tokens * rows;
  }

  /** The kernel variant for {@code tokens} tokens: tiles of 8, 16, 32 or 64 tokens, or large. */
  static String variant(int tokens) {
    if (tokens <= 8) {
      return "s8";
    }
    if (tokens <= 16) {
      return "s16";
    }
    if (tokens <= 32) {
      return "s32";
    }
    if (tokens <= 64) {
      return "s64";
    }
    return "l";
  }

  /**
   * The variants for one to eight tokens, which differ only in the columns of a k tile (64, 128 or
   * 256): the same k16 steps in the same order, so the same bits.
   */
  static final List<String> FEW_TOKEN_VARIANTS = List.of("s8", "s8k128", "s8k256");

  /**
   * The variants for more than 64 tokens: 128-row tiles of 128 or 256 tokens that differ in warps
   * (4 or 8) and k tile columns (32 or 64): the same k16 steps in the same order, so the same bits.
   */
  static final List<String> LARGE_VARIANTS = List.of("l", "l8w", "l8k64", "l8n256", "l8n256k64");

  /** Every kernel variant. */
  static final List<String> VARIANTS =
      List.of(
          "s8",
          "s8k128",
          "s8k256",
          "s16",
          "s32",
          "s64",
          "l",
          "l8w",
          "l8k64",
          "l8n256",
          "l8n256k64");

  /** Tokens per tile of a variant. */
  static int tileTokens(String variant) {
    switch (variant) {
      case "s8":
      case "s8k128":
      case "s8k256":
        return 8;
      case "s16":
        return 16;
      case "s32":
        return 32;
      case "s64":
        return 64;
      case "l8n256":
      case "l8n256k64":
        return 256;
      default:
        return 128;
    }
  }

  /** Rows per tile of a variant. */
  static int tileRows(String variant) {
    return LARGE_VARIANTS.contains(variant) ? 128 : TILE_ROWS;
  }

  /** Threads of a variant's block. */
  static int threads(String variant) {
    return variant.startsWith("l8") ? 256 : 128;
  }

  /** Dynamic shared memory of a variant: its cp.async stages of weight and activation tiles. */
  static int sharedBytes(String variant) {
    switch (variant) {
      case "l":
        return 3 * (128 + 128) * (32 + 8) * 2;
      case "l8w":
        return 4 * (128 + 128) * (32 + 8) * 2;
      case "l8k64":
        return 3 * (128 + 128) * (64 + 8) * 2;
      case "l8n256":
        return 4 * (128 + 256) * (32 + 8) * 2;
      case "l8n256k64":
        return 3 * (128 + 256) * (64 + 8) * 2;
      case "s8k128":
        return 3 * (TILE_ROWS + 8) * (128 + 8) * 2;
      case "s8k256":
        return 3 * (TILE_ROWS + 8) * (256 + 8) * 2;
      default:
        return 4 * (TILE_ROWS + tileTokens(variant)) * (64 + 8) * 2;
    }
  }
}
