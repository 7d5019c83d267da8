package io.flinfer.runtime.grammar;

import java.util.Arrays;

/**
 * Tokens' byte runs as a trie, so that the tokens that may follow an {@link OutputState} are found
 * by feeding each shared prefix once: a byte the state refuses rules out every token below it, and
 * the tokens that share a prefix share its work. Immutable; shared by every request.
 *
 * <p>Nodes are laid out in depth-first order (a node's subtree is the nodes after it up to {@link
 * #end}), so a walk is a loop over arrays with one jump past each refused subtree. Only the first
 * {@link #DEPTH} bytes of a token are nodes; a longer token's rest is fed to a copy of the state at
 * that depth.
 */
final class TokenTrie {
  /** Bytes of a token held as nodes; a walk keeps a state for each depth up to this one. */
  static final int DEPTH = 24;

  private final byte[][] bytes;
  // Node n (1-based; node 0 is the root, no byte) takes label[n] at depth depth[n]; its subtree is
  // nodes n..end[n]); the tokens whose first DEPTH bytes end exactly there are
  // tokens[tokenStart[n]..tokenStart[n + 1]), each id negated (~t) where the token is longer, so
  // that a walk reads a token's bytes only then (reading each token's length missed the cache).
  private final byte[] label;
  private final byte[] depth;
  private final int[] end;
  private final int[] tokenStart;
  private final int[] tokens;

  private TokenTrie(byte[][] bytes, int[] order) {
    this.bytes = bytes;
    // Each token adds the nodes past its common prefix with the one before it (sorted order).
    int nodes = 1;
    byte[] previous = new byte[0];
    for (int t : order) {
      byte[] h = head(bytes[t]);
      nodes += h.length - common(previous, h);
      previous = h;
    }
    label = new byte[nodes];
    depth = new byte[nodes];
    end = new int[nodes];
    tokenStart = new int[nodes + 1];
    tokens = new int[order.length];
    int[] open = new int[DEPTH + 1];
    int n = 0;
    int openDepth = 0;
    previous = new byte[0];
    for (int i = 0; i < order.length; i++) {
      byte[] h = head(bytes[order[i]]);
      int c = common(previous, h);
      // Nodes deeper than the common prefix are complete: their subtrees end here.
      while (openDepth > c) {
        end[open[openDepth--]] = n + 1;
      }
      for (int d = c + 1; d <= h.length; d++) {
        n++;
        label[n] = h[d - 1];
        depth[n] = (byte) d;
        open[++openDepth] = n;
      }
      tokens[i] = bytes[order[i]].length > DEPTH ? ~order[i] : order[i];
      tokenStart[n + 1]++;
      previous = h;
    }
    while (openDepth > 0) {
      end[open[openDepth--]] = n + 1;
    }
    end[0] = nodes;
    for (int k = 0; k < nodes; k++) {
      tokenStart[k + 1] += tokenStart[k];
    }
  }

  /**
   * The trie of tokens {@code ids}, token t being {@code bytes[t]} (each of at least one byte), the
   * ids in the order of {@link #sorted}.
   */
  static TokenTrie of(byte[][] bytes, int[] ids) {
    return new TokenTrie(bytes, ids);
  }

  /** The tokens {@code ids} ordered by their first {@link #DEPTH} bytes, as unsigned numbers. */
  static int[] sorted(byte[][] bytes, int[] ids) {
    // A primitive sort on the first five bytes (zero-padded, which keeps a prefix first) with the
    // id in the low bits, then each run of equal keys by its bytes: a comparator over the whole
    // vocabulary cost a cold start several times the rest of the table.
    long[] keys = new long[ids.length];
    for (int i = 0; i < ids.length; i++) {
      byte[] b = bytes[ids[i]];
      long k = 0;
      for (int j = 0; j < KEY_BYTES; j++) {
        k = k << 8 | (j < b.length ? b[j] & 0xff : 0);
      }
      keys[i] = k << ID_BITS | ids[i];
    }
    Arrays.sort(keys);
    int[] out = new int[ids.length];
    for (int i = 0; i < out.length; i++) {
      out[i] = (int) (keys[i] & (1L << ID_BITS) - 1);
    }
    for (int from = 0; from < out.length; ) {
      int to = from + 1;
      while (to < out.length && keys[to] >>> ID_BITS == keys[from] >>> ID_BITS) {
        to++;
      }
      if (to - from > 1) {
        sortRun(bytes, out, from, to);
      }
      from = to;
    }
    return out;
  }

  private static final int KEY_BYTES = 5;
  private static final int ID_BITS = 64 - 8 * KEY_BYTES - 1;

  private static void sortRun(byte[][] bytes, int[] out, int from, int to) {
    Integer[] run = new Integer[to - from];
    for (int i = 0; i < run.length; i++) {
      run[i] = out[from + i];
    }
    Arrays.sort(
        run,
        (a, b) -> {
          byte[] x = bytes[a];
          byte[] y = bytes[b];
          return Arrays.compareUnsigned(
              x, 0, Math.min(x.length, DEPTH), y, 0, Math.min(y.length, DEPTH));
        });
    for (int i = 0; i < run.length; i++) {
      out[from + i] = run[i];
    }
  }

  private static byte[] head(byte[] b) {
    return b.length <= DEPTH ? b : Arrays.copyOf(b, DEPTH);
  }

  private static int common(byte[] a, byte[] b) {
    int m = Arrays.mismatch(a, b);
    return m < 0 ? a.length : m;
  }

  /** Nodes, the root included. */
  int nodes() {
    return label.length;
  }

  /**
   * Adds to {@code mask} the tokens that may follow {@code state}; returns how many. {@code stack}
   * holds {@link #DEPTH} + 1 states of the same kind, and it and {@code probe} are overwritten.
   */
  int allow(OutputState state, long[] mask, OutputState[] stack, OutputState probe) {
    stack[0].copyFrom(state);
    int count = 0;
    int n = 1;
    int nodes = label.length;
    while (n < nodes) {
      int d = depth[n];
      OutputState s = stack[d];
      s.copyFrom(stack[d - 1]);
      if (!s.accept(label[n])) {
        n = end[n];
        continue;
      }
      for (int i = tokenStart[n]; i < tokenStart[n + 1]; i++) {
        int t = tokens[i];
        if (t < 0) {
          t = ~t;
          byte[] b = bytes[t];
          probe.copyFrom(s);
          if (!probe.accept(b, DEPTH, b.length)) {
            continue;
          }
        }
        mask[t >>> 6] |= 1L << t;
        count++;
      }
      n++;
    }
    return count;
  }
}
