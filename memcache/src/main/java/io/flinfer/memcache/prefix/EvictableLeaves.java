package io.flinfer.memcache.prefix;

import java.util.NavigableSet;
import java.util.TreeSet;
import java.util.function.Predicate;

/**
 * The radix tree's evictable nodes of one tier in eviction order, least recently used first (ties
 * by node id), kept sorted as nodes are touched, locked, unlocked, split and deleted. Owns only the
 * order; the tree owns the nodes and says which are evictable.
 */
final class EvictableLeaves {
  /** The device tier's: unlocked nodes on the device with no child on the device. */
  static final Predicate<TreeNode> DEVICE =
      n -> n.lockRef == 0 && n.value != null && !n.hasDeviceChild();

  /** The host tier's: nodes on the host with no child on the host, not loading. */
  static final Predicate<TreeNode> HOST =
      n -> n.hostValue != null && !n.loading && !n.hasHostChild();

  private final Predicate<TreeNode> evictable;

  EvictableLeaves(Predicate<TreeNode> evictable) {
    this.evictable = evictable;
  }

  private final NavigableSet<TreeNode> leaves =
      new TreeSet<>(
          (a, b) -> {
            int c = Long.compare(a.lastAccess, b.lastAccess);
            return c != 0 ? c : Long.compare(a.id, b.id);
          });

  /** Records an access to {@code node}, moving it in the order if it is an evictable leaf. */
  void touch(TreeNode node, long now) {
    if (node.lastAccess == now) {
      return;
    }
    boolean queued = leaves.remove(node);
    node.lastAccess = now;
    if (queued) {
      leaves.add(node);
    }
  }

  /** Adds {@code node} if it is evictable and below a root, else removes it. */
  void update(TreeNode node) {
    if (node.parent != null && evictable.test(node)) {
      leaves.add(node);
    } else {
      leaves.remove(node);
    }
  }

  void remove(TreeNode node) {
    leaves.remove(node);
  }

  boolean contains(TreeNode node) {
    return leaves.contains(node);
  }

  boolean isEmpty() {
    return leaves.isEmpty();
  }

  /** Removes and returns the least recently used evictable leaf. */
  TreeNode pollOldest() {
    return leaves.pollFirst();
  }

  void clear() {
    leaves.clear();
  }
}
