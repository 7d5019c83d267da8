package io.flinfer.memcache.prefix;

import java.util.function.Consumer;

/**
 * A node's children keyed by a long (the first token, or a hash of the first page): open addressing
 * on primitive keys, so lookups box nothing. Children whose keys collide are chained through {@link
 * TreeNode#nextSameHash} and told apart by the caller.
 */
final class ChildMap {
  private long[] keys = new long[4];
  private TreeNode[] nodes = new TreeNode[4];
  private int size;

  boolean isEmpty() {
    return size == 0;
  }

  int size() {
    return size;
  }

  TreeNode get(long key) {
    int mask = keys.length - 1;
    for (int i = mix(key) & mask; ; i = (i + 1) & mask) {
      TreeNode n = nodes[i];
      if (n == null) {
        return null;
      }
      if (keys[i] == key) {
        return n;
      }
    }
  }

  /** Sets the chain head for {@code key}. */
  void put(long key, TreeNode node) {
    if ((size + 1) * 4 > keys.length * 3) {
      grow();
    }
    int mask = keys.length - 1;
    for (int i = mix(key) & mask; ; i = (i + 1) & mask) {
      if (nodes[i] == null) {
        keys[i] = key;
        nodes[i] = node;
        size++;
        return;
      }
      if (keys[i] == key) {
        nodes[i] = node;
        return;
      }
    }
  }

  void remove(long key) {
    int mask = keys.length - 1;
    int i = mix(key) & mask;
    while (nodes[i] != null && keys[i] != key) {
      i = (i + 1) & mask;
    }
    if (nodes[i] == null) {
      return;
    }
    nodes[i] = null;
    size--;
    // Re-insert the rest of the cluster so probing stays correct.
    for (int j = (i + 1) & mask; nodes[j] != null; j = (j + 1) & mask) {
      long k = keys[j];
      TreeNode n = nodes[j];
      nodes[j] = null;
      size--;
      put(k, n);
    }
  }

  /** Whether any child, chains included, satisfies {@code test}. */
  boolean any(java.util.function.Predicate<TreeNode> test) {
    for (TreeNode head : nodes) {
      for (TreeNode n = head; n != null; n = n.nextSameHash) {
        if (test.test(n)) {
          return true;
        }
      }
    }
    return false;
  }

  /** Every child, chains included. */
  void forEach(Consumer<TreeNode> action) {
    for (TreeNode head : nodes) {
      for (TreeNode n = head; n != null; n = n.nextSameHash) {
        action.accept(n);
      }
    }
  }

  private void grow() {
    long[] oldKeys = keys;
    TreeNode[] oldNodes = nodes;
    keys = new long[oldKeys.length * 2];
    nodes = new TreeNode[oldKeys.length * 2];
    size = 0;
    for (int i = 0; i < oldKeys.length; i++) {
      if (oldNodes[i] != null) {
        put(oldKeys[i], oldNodes[i]);
      }
    }
  }

  private static int mix(long key) {
    long h = key * 0x9E3779B97F4A7C15L;
    return (int) (h ^ (h >>> 32));
  }
}
