package io.flinfer.operators.engine;

import io.flinfer.memcache.prefix.TreeNode;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/** Orders the waiting queue by a {@link SchedulePolicy}; prefixes are matched beforehand. */
final class WaitingQueueOrder {
  private WaitingQueueOrder() {}

  static List<Req> sort(List<Req> waiting, SchedulePolicy policy) {
    List<Req> out = new ArrayList<>(waiting);
    switch (policy) {
      case FCFS:
        break; // the queue is already in arrival order
      case LPM:
        // Stable: equal prefixes keep arrival order.
        out.sort(Comparator.comparingInt((Req r) -> r.prefixLen).reversed());
        break;
      case DFS_WEIGHT:
        return dfsWeight(out);
      default:
        throw new IllegalStateException(policy.toString());
    }
    return out;
  }

  /**
   * Walks the tree formed by the requests' last nodes and their ancestors in post-order, heavier
   * subtrees (more waiting requests) first, a node's own requests after its subtrees (as SGLang's
   * {@code _get_dfs_priority}), so requests that share a prefix are scheduled together.
   */
  private static List<Req> dfsWeight(List<Req> reqs) {
    Map<TreeNode, List<Req>> at = new IdentityHashMap<>();
    Map<TreeNode, List<TreeNode>> children = new IdentityHashMap<>();
    Map<TreeNode, Integer> weight = new IdentityHashMap<>();
    List<TreeNode> roots = new ArrayList<>();
    List<Req> unmatched = new ArrayList<>();
    for (Req r : reqs) {
      TreeNode n = r.cache.lastNode();
      if (n == null) {
        unmatched.add(r);
        continue;
      }
      at.computeIfAbsent(n, k -> new ArrayList<>()).add(r);
      for (TreeNode x = n; x != null; x = x.parent()) {
        weight.merge(x, 1, Integer::sum);
        if (weight.get(x) == 1) {
          if (x.parent() == null) {
            roots.add(x);
          } else {
            children.computeIfAbsent(x.parent(), k -> new ArrayList<>()).add(x);
          }
        }
      }
    }
    List<Req> out = new ArrayList<>(reqs.size());
    Map<TreeNode, Boolean> seen = new HashMap<>();
    for (TreeNode root : roots) {
      visit(root, at, children, weight, out, seen);
    }
    out.addAll(unmatched);
    return out;
  }

  private static void visit(
      TreeNode n,
      Map<TreeNode, List<Req>> at,
      Map<TreeNode, List<TreeNode>> children,
      Map<TreeNode, Integer> weight,
      List<Req> out,
      Map<TreeNode, Boolean> seen) {
    if (seen.put(n, Boolean.TRUE) != null) {
      return;
    }
    List<TreeNode> kids = new ArrayList<>(children.getOrDefault(n, List.of()));
    kids.sort(Comparator.comparingInt((TreeNode k) -> weight.get(k)).reversed());
    for (TreeNode k : kids) {
      visit(k, at, children, weight, out, seen);
    }
    out.addAll(at.getOrDefault(n, List.of()));
  }
}
