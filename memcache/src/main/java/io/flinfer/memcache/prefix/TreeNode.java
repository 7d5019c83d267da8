package io.flinfer.memcache.prefix;

/**
 * A node of the radix tree: a run of token ids (its key) and their KV slots (its value), the
 * children keyed by their first token (page size 1) or first page, the number of running requests
 * holding it, and its last access for LRU eviction.
 *
 * <p>With a host tier, a node also remembers where its KV lies there ({@code hostValue}, SGLang's
 * {@code host_value}); a node evicted from the device keeps only that ({@code value} is null) and
 * stays in the tree until the host tier evicts it too. A node is {@code loading} while its KV comes
 * back from the host, which keeps the host tier from evicting it meanwhile.
 */
public final class TreeNode {
  final long id;
  TreeNode parent;
  ChildMap children;
  int[] key;
  int[] value;
  int[] hostValue;
  boolean loading;
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

  /** Whether the node's KV is in the device pool (SGLang: not {@code evicted}). */
  public boolean onDevice() {
    return value != null;
  }

  /** Whether the node's KV has a copy in the host tier (SGLang's {@code backuped}). */
  public boolean onHost() {
    return hostValue != null;
  }

  boolean hasHostChild() {
    return children != null && children.any(TreeNode::onHost);
  }

  boolean hasDeviceChild() {
    return children != null && children.any(TreeNode::onDevice);
  }

  boolean isLeaf() {
    return children == null || children.isEmpty();
  }
}
