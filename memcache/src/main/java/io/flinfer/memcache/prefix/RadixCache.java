package io.flinfer.memcache.prefix;

import io.flinfer.memcache.ReqToTokenPool;
import io.flinfer.memcache.TokenToKvPoolAllocator;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;

/**
 * The radix prefix cache (SGLang's {@code RadixCache}): a tree per namespace whose paths spell
 * cached token sequences and whose nodes hold those tokens' KV slots. Owns the tree, the set of
 * evictable leaves and the evictable / protected token counts; every cached slot is owned by
 * exactly one node.
 *
 * <p>Keys are matched in whole pages. Namespaces (a tenant or cache salt) have disjoint trees, so a
 * request never matches a prefix cached for another namespace and cannot learn another tenant's
 * prompts from cache timing. Eviction frees the least recently used unlocked leaves first, across
 * all namespaces.
 */
public class RadixCache implements PrefixCache {
  private static final int[] EMPTY = new int[0];

  private final ReqToTokenPool reqToTokenPool;
  final TokenToKvPoolAllocator allocator;
  private final int pageSize;
  private final boolean disabled;
  private final Map<String, TreeNode> roots = new HashMap<>();

  private final EvictableLeaves evictableLeaves = new EvictableLeaves(EvictableLeaves.DEVICE);

  private long clock;
  private long nextId;
  int evictableSize;
  private int protectedSize;
  private int lastEvictedLength;

  public RadixCache(ReqToTokenPool reqToTokenPool, TokenToKvPoolAllocator allocator) {
    this(reqToTokenPool, allocator, false);
  }

  /** With {@code disabled}, nothing is cached and a finished request frees all its KV at once. */
  public RadixCache(
      ReqToTokenPool reqToTokenPool, TokenToKvPoolAllocator allocator, boolean disabled) {
    this.reqToTokenPool = reqToTokenPool;
    this.allocator = allocator;
    this.pageSize = allocator.pageSize();
    this.disabled = disabled;
  }

  public int pageSize() {
    return pageSize;
  }

  public boolean isDisabled() {
    return disabled;
  }

  /** Drops the whole tree without freeing slots (the caller clears the pools with it). */
  public void reset() {
    roots.clear();
    evictableLeaves.clear();
    evictableSize = 0;
    protectedSize = 0;
  }

  private TreeNode root(String namespace) {
    TreeNode r = roots.get(namespace);
    if (r == null) {
      r = new TreeNode(nextId++, EMPTY, EMPTY);
      r.lockRef = 1; // a root is never evicted
      r.namespace = namespace;
      roots.put(namespace, r);
    }
    return r;
  }

  @Override
  public PrefixMatch matchPrefix(String namespace, int[] key, int len) {
    return match(namespace, key, len, true);
  }

  /**
   * With {@code count}, the match counts as a hit of the node it ends at (a lookup by a request).
   */
  PrefixMatch match(String namespace, int[] key, int len, boolean count) {
    len = len / pageSize * pageSize;
    if (disabled || len == 0) {
      return new PrefixMatch(EMPTY, disabled ? null : root(namespace));
    }
    int[] out = new int[len];
    Descent d = descend(namespace, key, len, out);
    if (count) {
      d.deviceNode().hitCount++;
    }
    int dm = d.deviceMatched();
    return new PrefixMatch(
        dm == len ? out : Arrays.copyOf(out, dm), d.deviceNode(), d.matched() - dm, d.node());
  }

  /**
   * Where a key's walk down the tree ended: the deepest node and the tokens matched to it, and the
   * deepest node on the device and the tokens matched to that (the same without a host tier).
   */
  record Descent(TreeNode node, int matched, TreeNode deviceNode, int deviceMatched) {}

  /**
   * Follows {@code key[0..len)} down the namespace's tree, marking every node on the way as used
   * now and splitting a node the key matches only in part, so the walk ends on a node boundary.
   * With {@code slots}, copies the device KV slots of the matched tokens there.
   */
  Descent descend(String namespace, int[] key, int len, int[] slots) {
    long now = ++clock;
    TreeNode node = root(namespace);
    touch(node, now);
    TreeNode deviceNode = node;
    int matched = 0;
    int deviceMatched = 0;
    while (matched < len) {
      TreeNode child = child(node, key, matched);
      if (child == null) {
        break;
      }
      touch(child, now);
      int p = matchLength(child.key, key, matched, len);
      boolean partial = p < child.key.length;
      if (partial) {
        child = splitNode(child, p);
      }
      if (child.value != null) {
        if (slots != null) {
          System.arraycopy(child.value, 0, slots, matched, p);
        }
        deviceNode = child;
        deviceMatched = matched + p;
      }
      matched += p;
      node = child;
      if (partial) {
        break;
      }
    }
    return new Descent(node, matched, deviceNode, deviceMatched);
  }

  /** Records an access to {@code node} in every tier's eviction order. */
  void touch(TreeNode node, long now) {
    evictableLeaves.touch(node, now);
  }

  /** A new node id, and the tick of the clock now (for nodes made outside {@link #descend}). */
  long newNodeId() {
    return nextId++;
  }

  long clock() {
    return clock;
  }

  /**
   * Inserts {@code key[0..len)} with KV slots {@code value[0..len)}; {@code len} must be page
   * aligned. Returns how many leading tokens were already cached (their slots in {@code value} are
   * then duplicates, which the caller frees). The new tail is owned by the tree.
   */
  public int insert(String namespace, int[] key, int len, int[] value) {
    if (disabled) {
      return 0;
    }
    if (len % pageSize != 0) {
      throw new IllegalArgumentException(
          "insert needs whole pages: " + len + " tokens, page size " + pageSize);
    }
    Descent d = descend(namespace, key, len, null);
    TreeNode node = d.node();
    int matched = d.matched();
    if (d.deviceMatched() < matched) {
      adopt(d.deviceNode(), node, d.deviceMatched(), value);
    }
    if (matched < len) {
      TreeNode leaf =
          new TreeNode(
              nextId++,
              Arrays.copyOfRange(key, matched, len),
              Arrays.copyOfRange(value, matched, len));
      leaf.parent = node;
      leaf.lastAccess = clock;
      addChild(node, leaf);
      evictableSize += len - matched;
      updateLeafSets(node);
      updateLeafSets(leaf);
      inserted(leaf);
    }
    return d.deviceMatched();
  }

  /**
   * The nodes below {@code deviceNode} down to {@code last} were evicted from the device and the
   * caller computed their KV again (at {@code value[from..]}): the tree takes those slots instead
   * of keeping the copy in the host tier alone.
   */
  private void adopt(TreeNode deviceNode, TreeNode last, int from, int[] value) {
    int end = from;
    for (TreeNode n = last; n != deviceNode; n = n.parent) {
      end += n.key.length;
    }
    int at = end;
    for (TreeNode n = last; n != deviceNode; n = n.parent) {
      at -= n.key.length;
      n.value = Arrays.copyOfRange(value, at, at + n.key.length);
      evictableSize += n.key.length;
      adopted(n);
    }
    for (TreeNode n = last; n != deviceNode.parent && n != null; n = n.parent) {
      updateLeafSets(n);
    }
  }

  /** Called for each node that is on the device again because {@link #insert} adopted slots. */
  void adopted(TreeNode node) {}

  /** Called for each leaf {@link #insert} adds (the host tier's write-through starts here). */
  void inserted(TreeNode leaf) {}

  @Override
  public void cacheFinishedReq(CacheRequest req, int[] tokenIds, int committedLen) {
    int[] kv = new int[committedLen];
    reqToTokenPool.read(req.reqPoolIdx, 0, committedLen, kv, 0);
    allocator.freeGroupBegin();
    try {
      if (disabled) {
        allocator.free(kv);
      } else {
        int keyLen = committedLen / pageSize * pageSize;
        int newPrefixLen = insert(req.namespace(), tokenIds, keyLen, kv);
        // Slots for tokens that were cached meanwhile by another request are duplicates.
        freeRange(kv, req.cacheProtectedLen, newPrefixLen);
        freeRange(kv, keyLen, committedLen); // the unaligned tail
        decLockRef(req.lastNode);
      }
    } finally {
      allocator.freeGroupEnd();
    }
    reqToTokenPool.free(req.reqPoolIdx);
    req.reqPoolIdx = -1;
    req.resetPrefix();
  }

  @Override
  public void cacheUnfinishedReq(CacheRequest req, int[] fillIds, int fillLen) {
    int[] kv = new int[fillLen];
    reqToTokenPool.read(req.reqPoolIdx, 0, fillLen, kv, 0);
    if (disabled) {
      req.prefixIndices = kv;
      return;
    }
    int keyLen = fillLen / pageSize * pageSize;
    int newPrefixLen = insert(req.namespace(), fillIds, keyLen, kv);
    freeRange(kv, req.cacheProtectedLen, newPrefixLen);
    PrefixMatch m = match(req.namespace(), fillIds, keyLen, false);
    if (m.length() != keyLen) {
      throw new IllegalStateException("inserted " + keyLen + " tokens but matched " + m.length());
    }
    // The row now points at the tree's slots for the cached part.
    reqToTokenPool.write(
        req.reqPoolIdx,
        req.cacheProtectedLen,
        m.indices(),
        req.cacheProtectedLen,
        keyLen - req.cacheProtectedLen);
    req.cacheProtectedLen = keyLen;
    incLockRef(m.lastNode());
    decLockRef(req.lastNode);
    req.lastNode = m.lastNode();
    if (keyLen < fillLen) {
      // A partial last page stays the request's own, outside the tree.
      int[] prefix = Arrays.copyOf(m.indices(), fillLen);
      System.arraycopy(kv, keyLen, prefix, keyLen, fillLen - keyLen);
      req.prefixIndices = prefix;
    } else {
      req.prefixIndices = m.indices();
    }
  }

  private void freeRange(int[] slots, int from, int to) {
    if (to > from) {
      allocator.free(slots, from, to - from);
    }
  }

  @Override
  public int evict(int numTokens) {
    if (disabled || numTokens <= 0) {
      return 0;
    }
    int evicted = 0;
    allocator.freeGroupBegin();
    try {
      // A parent whose last child goes becomes a leaf and joins the set in LRU order.
      while (evicted < numTokens && !evictableLeaves.isEmpty()) {
        TreeNode leaf = evictableLeaves.pollOldest();
        evicted += leaf.value.length;
        lastEvictedLength = leaf.value.length;
        evictFromDevice(leaf);
      }
    } finally {
      allocator.freeGroupEnd();
    }
    return evicted;
  }

  /**
   * Frees the device slots of a node the device's eviction order gave up; without a host tier the
   * node (a leaf) leaves the tree.
   */
  void evictFromDevice(TreeNode leaf) {
    allocator.free(leaf.value);
    deleteLeaf(leaf);
  }

  /** Frees a node's device slots and keeps it in the tree for its host copy. */
  void dropDeviceValue(TreeNode node) {
    allocator.free(node.value);
    node.value = null;
    evictableSize -= node.key.length;
    updateLeafSets(node);
    updateLeafSets(node.parent);
  }

  @Override
  public int lastEvictedLength() {
    return lastEvictedLength;
  }

  @Override
  public void incLockRef(TreeNode node) {
    if (disabled || node == null) {
      return;
    }
    for (; node.parent != null; node = node.parent) {
      if (node.lockRef == 0) {
        evictableSize -= node.key.length;
        protectedSize += node.key.length;
      }
      node.lockRef++;
      updateLeafSets(node);
    }
  }

  @Override
  public void decLockRef(TreeNode node) {
    if (disabled || node == null) {
      return;
    }
    for (; node.parent != null; node = node.parent) {
      if (node.lockRef == 0) {
        throw new IllegalStateException(
            "lock released that was never taken (node " + node.id + ")");
      }
      if (node.lockRef == 1) {
        evictableSize += node.key.length;
        protectedSize -= node.key.length;
      }
      node.lockRef--;
      updateLeafSets(node);
    }
  }

  @Override
  public int evictableSize() {
    return evictableSize;
  }

  @Override
  public int protectedSize() {
    return protectedSize;
  }

  /** Moves {@code node} in or out of each tier's eviction order, as its state now says. */
  void updateLeafSets(TreeNode node) {
    evictableLeaves.update(node);
  }

  /** Namespaces with a tree. */
  public Set<String> namespaces() {
    return roots.keySet();
  }

  /**
   * Checks the tree's invariants and returns every cached slot: lock counts never negative and
   * never lower than a child's, children keyed by their first page, sizes that add up, the
   * evictable-leaf set exact. Throws {@link IllegalStateException} on the first violation.
   */
  public int[] verifyInvariants() {
    int[] slots = new int[evictableSize + protectedSize];
    int[] n = {0, 0, 0}; // slots written, evictable tokens, protected tokens
    for (TreeNode root : roots.values()) {
      if (root.lockRef != 1) {
        throw new IllegalStateException("root lock is " + root.lockRef);
      }
      verify(root, slots, n);
    }
    if (n[1] != evictableSize || n[2] != protectedSize) {
      throw new IllegalStateException(
          "sizes do not add up: evictable "
              + evictableSize
              + " vs "
              + n[1]
              + ", protected "
              + protectedSize
              + " vs "
              + n[2]);
    }
    return Arrays.copyOf(slots, n[0]);
  }

  private void verify(TreeNode node, int[] slots, int[] n) {
    if (node.parent != null) {
      if (node.lockRef < 0) {
        throw new IllegalStateException("negative lock on node " + node.id);
      }
      if (node.key.length == 0 || node.key.length % pageSize != 0) {
        throw new IllegalStateException("node " + node.id + " has key " + node.key.length);
      }
      if (node.lockRef > node.parent.lockRef && node.parent.parent != null) {
        throw new IllegalStateException("node " + node.id + " is locked more than its parent");
      }
      if (node.value != null) {
        if (node.value.length != node.key.length) {
          throw new IllegalStateException(
              "node " + node.id + " has key " + node.key.length + ", value " + node.value.length);
        }
        if (node.parent.parent != null && node.parent.value == null) {
          throw new IllegalStateException("node " + node.id + " is on the device, its parent not");
        }
        System.arraycopy(node.value, 0, slots, n[0], node.value.length);
        n[0] += node.value.length;
        n[node.lockRef > 0 ? 2 : 1] += node.key.length;
      } else if (node.hostValue == null || node.lockRef > 0) {
        throw new IllegalStateException(
            "node " + node.id + " is off the device but " + (node.lockRef > 0 ? "locked" : "kept"));
      }
      if (EvictableLeaves.DEVICE.test(node) != evictableLeaves.contains(node)) {
        throw new IllegalStateException("node " + node.id + " evictable-leaf status is wrong");
      }
      verifyNode(node);
    }
    if (node.children != null) {
      node.children.forEach(
          child -> {
            if (child.parent != node || child(node, child.key, 0) != child) {
              throw new IllegalStateException("child " + child.id + " is not reachable by its key");
            }
            verify(child, slots, n);
          });
    }
  }

  /** Further checks of one node below a root, by a cache with more tiers. */
  void verifyNode(TreeNode node) {}

  /** Every node below the roots, parents before children. */
  void forEachNode(java.util.function.Consumer<TreeNode> action) {
    for (TreeNode root : roots.values()) {
      forEachBelow(root, action);
    }
  }

  private static void forEachBelow(TreeNode node, java.util.function.Consumer<TreeNode> action) {
    if (node.children != null) {
      node.children.forEach(
          c -> {
            action.accept(c);
            forEachBelow(c, action);
          });
    }
  }

  // ---- tree mechanics ----

  private long childKey(int[] key, int off) {
    if (pageSize == 1) {
      return key[off];
    }
    long h = 0x243F6A8885A308D3L;
    for (int i = off; i < off + pageSize; i++) {
      h = (h ^ key[i]) * 0x100000001B3L;
      h ^= h >>> 29;
    }
    return h;
  }

  /** The child of {@code node} whose key starts with the page at {@code key[off..]}, or null. */
  private TreeNode child(TreeNode node, int[] key, int off) {
    if (node.children == null) {
      return null;
    }
    TreeNode c = node.children.get(childKey(key, off));
    while (c != null && !Arrays.equals(c.key, 0, pageSize, key, off, off + pageSize)) {
      c = c.nextSameHash;
    }
    return c;
  }

  void addChild(TreeNode parent, TreeNode child) {
    if (parent.children == null) {
      parent.children = new ChildMap();
    }
    long k = childKey(child.key, 0);
    child.nextSameHash = parent.children.get(k);
    parent.children.put(k, child);
  }

  private void removeChild(TreeNode parent, TreeNode child) {
    long k = childKey(child.key, 0);
    TreeNode head = parent.children.get(k);
    if (head == child) {
      if (child.nextSameHash == null) {
        parent.children.remove(k);
      } else {
        parent.children.put(k, child.nextSameHash);
      }
    } else {
      TreeNode prev = head;
      while (prev.nextSameHash != child) {
        prev = prev.nextSameHash;
      }
      prev.nextSameHash = child.nextSameHash;
    }
    child.nextSameHash = null;
  }

  /** Replaces {@code old} by {@code replacement} (same first page) among its parent's children. */
  private void replaceChild(TreeNode parent, TreeNode old, TreeNode replacement) {
    long k = childKey(old.key, 0);
    replacement.nextSameHash = old.nextSameHash;
    old.nextSameHash = null;
    TreeNode head = parent.children.get(k);
    if (head == old) {
      parent.children.put(k, replacement);
    } else {
      TreeNode prev = head;
      while (prev.nextSameHash != old) {
        prev = prev.nextSameHash;
      }
      prev.nextSameHash = replacement;
    }
  }

  /** Matched tokens of {@code nodeKey} against {@code key[off..end)}, in whole pages. */
  private int matchLength(int[] nodeKey, int[] key, int off, int end) {
    int max = Math.min(nodeKey.length, end - off);
    int i = 0;
    if (pageSize == 1) {
      while (i < max && nodeKey[i] == key[off + i]) {
        i++;
      }
      return i;
    }
    while (i + pageSize <= max
        && Arrays.equals(nodeKey, i, i + pageSize, key, off + i, off + i + pageSize)) {
      i += pageSize;
    }
    return i;
  }

  /** Splits {@code child} after {@code splitLen} tokens; returns the new upper node. */
  private TreeNode splitNode(TreeNode child, int splitLen) {
    TreeNode upper = new TreeNode(nextId++, Arrays.copyOf(child.key, splitLen), null);
    if (child.value != null) {
      upper.value = Arrays.copyOf(child.value, splitLen);
      child.value = Arrays.copyOfRange(child.value, splitLen, child.value.length);
    }
    if (child.hostValue != null) {
      upper.hostValue = Arrays.copyOf(child.hostValue, splitLen);
      child.hostValue = Arrays.copyOfRange(child.hostValue, splitLen, child.hostValue.length);
    }
    upper.loading = child.loading;
    upper.parent = child.parent;
    upper.lockRef = child.lockRef;
    upper.lastAccess = child.lastAccess; // upper is not a leaf: not in the eviction set
    upper.hitCount = child.hitCount;
    replaceChild(child.parent, child, upper);
    child.key = Arrays.copyOfRange(child.key, splitLen, child.key.length);
    child.parent = upper;
    addChild(upper, child);
    return upper;
  }

  /** Takes a leaf out of the tree; its slots in every tier are the caller's to free. */
  void deleteLeaf(TreeNode leaf) {
    TreeNode parent = leaf.parent;
    removeChild(parent, leaf);
    if (leaf.value != null) {
      evictableSize -= leaf.key.length;
    }
    leaf.value = null;
    leaf.hostValue = null;
    leaf.parent = null;
    updateLeafSets(leaf);
    updateLeafSets(parent);
    if (parent.parent == null && parent.isLeaf() && parent.namespace != null) {
      // A namespace whose tree is empty is forgotten: one per end user must not grow forever. A
      // request still holding the old root as its last node loses nothing (roots take no locks).
      roots.remove(parent.namespace, parent);
    }
  }
}
