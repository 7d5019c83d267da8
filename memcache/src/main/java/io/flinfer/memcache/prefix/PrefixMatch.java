package io.flinfer.memcache.prefix;

/**
 * The result of a prefix match (SGLang's {@code MatchResult}): the device KV slots of the longest
 * cached prefix and the node that part ends at (the root of the namespace when nothing matched,
 * null for caches without a tree); then how many more tokens of the prefix only the host tier holds
 * and the node they end at ({@code lastNode} when none).
 */
public record PrefixMatch(
    int[] indices, TreeNode lastNode, int hostHitLength, TreeNode lastHostNode) {

  /** A match on the device alone. */
  public PrefixMatch(int[] indices, TreeNode lastNode) {
    this(indices, lastNode, 0, lastNode);
  }

  /** Tokens whose KV is in the device pool (SGLang's {@code device_indices} length). */
  public int length() {
    return indices.length;
  }
}
