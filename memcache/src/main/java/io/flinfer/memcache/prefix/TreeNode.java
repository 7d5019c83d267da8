package io.flinfer.memcache.prefix;

/**
 * A node of the radix tree: a run of token ids (its key) and their KV slots (its value), the
 * children keyed by their first token (page size 1) or first page, the number of running requests
 * holding it, and its last access for LRU eviction.
 */
public final class TreeNode {
  final long id;
  TreeNode parent;
  ChildMap children;
  int[] key;
  int[] value;
  int lockRef;
  long lastAccess;
  int hitCount;

  /** A root's namespace; null below the roots. */
  String namespace;

  /** Next child of the same parent whose first page hashes alike (page size > 1). */
  TreeNode nextSameHash;

  TreeNode(long id, int[] key, int[] value) {
    this.id = id;
    this.key = key;
    this.value = value;
  }

  /** The parent node; null for a namespace's root. */
  public TreeNode parent() {
    return parent;
  }

  public int lockRef() {
    return lockRef;
  }

  public int length() {
    return key.length;
  }

  public long lastAccess() {
    return lastAccess;
  }

  public int hitCount() {
    return hitCount;
  }

  boolean isLeaf() {
    return children == null || children.isEmpty();
  }
}
