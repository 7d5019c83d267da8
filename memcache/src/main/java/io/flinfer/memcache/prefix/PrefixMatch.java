package io.flinfer.memcache.prefix;

/**
 * The result of a prefix match: the KV slots of the longest cached prefix and the node it ends at
 * (the root of the namespace when nothing matched, null for caches without a tree).
 */
public record PrefixMatch(int[] indices, TreeNode lastNode) {
  public int length() {
    return indices.length;
  }
}
