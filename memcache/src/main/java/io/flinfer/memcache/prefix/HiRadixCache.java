package io.flinfer.memcache.prefix;

import io.flinfer.memcache.KvSlotBytes;
import io.flinfer.memcache.ReqToTokenPool;
import io.flinfer.memcache.SimpleTokenToKvPoolAllocator;
import io.flinfer.memcache.TokenToKvPoolAllocator;
import io.flinfer.memcache.tier.FileKvStorage;
import io.flinfer.memcache.tier.HiCacheConfig;
import io.flinfer.memcache.tier.HostKvPool;
import io.flinfer.memcache.tier.PageHasher;
import io.flinfer.memcache.tier.StorageCounters;
import io.flinfer.memcache.tier.TierStats;
import io.flinfer.memcache.tier.WritePolicy;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The radix cache over three tiers (SGLang's {@code HiRadixCache}): the device pool (L1), a host
 * pool (L2) that keeps the KV of prefixes the device evicts, and optionally a storage directory
 * (L3) of pages named by their prefix, which outlives the job.
 *
 * <p>The tree keeps, per node, its device slots ({@code value}) and its host slots ({@code
 * hostValue}). Both sets are closed under parents: a node on the device has its parent on the
 * device, a node on the host its parent on the host. The device evicts its least recently used
 * unlocked nodes without device children: one with a host copy only loses its device slots, one
 * without leaves the tree ({@link WritePolicy#WRITE_BACK} copies it first). The host evicts its
 * least recently used nodes without host children that are not loading: a node on the device only
 * loses its host copy, one off the device leaves the tree. A match reports the device part and the
 * host part after it; {@link #loadBack} brings the host part to the device before the request
 * extends. With storage, every page of {@link HiCacheConfig#storagePageTokens()} tokens that
 * reaches the host is written there too, and a match reads the pages that follow its cached part
 * from there into the host (prefetch).
 *
 * <p>All tiers hold a slot's very bytes, so a prefix loaded back gives the same bits as computed.
 */
public final class HiRadixCache extends RadixCache implements AutoCloseable {
  private final KvSlotBytes device;
  private final HiCacheConfig config;
  private final HostKvPool hostPool;
  private final SimpleTokenToKvPoolAllocator hostAllocator;
  private final FileKvStorage storage;
  private final PageHasher hasher;
  private final EvictableLeaves hostLeaves = new EvictableLeaves(EvictableLeaves.HOST);
  private int hostOnly;
  private long hostHitTokens;
  private long storageHitTokens;
  private long loadBackNanos;
  private long writeBackTokens;
  private long writeBackNanos;

  /**
   * @param device the device pool's slots as bytes, which the host tier copies
   * @param storageSalt what makes stored KV reusable: the model and KV format (pages of another
   *     salt are never found)
   */
  public HiRadixCache(
      ReqToTokenPool reqToTokenPool,
      TokenToKvPoolAllocator allocator,
      KvSlotBytes device,
      HiCacheConfig config,
      String storageSalt) {
    super(reqToTokenPool, allocator, false);
    this.device = device;
    this.config = config;
    int hostTokens = config.hostTokens(allocator.size());
    this.hostPool = new HostKvPool(hostTokens, device.slotBytes());
    this.hostAllocator = new SimpleTokenToKvPoolAllocator(hostTokens);
    if (config.storageDir() != null) {
      int p = config.storagePageTokens();
      if (p % pageSize() != 0) {
        throw new IllegalArgumentException(
            "storage pages of " + p + " tokens do not hold whole pages of " + pageSize());
      }
      this.storage =
          new FileKvStorage(config.storageDir(), config.storageBytes(), p, device.slotBytes());
      this.hasher = new PageHasher(storageSalt + "|slot=" + device.slotBytes(), p);
    } else {
      this.storage = null;
      this.hasher = null;
    }
  }

  HostKvPool hostPool() {
    return hostPool;
  }

  public HiCacheConfig hiCacheConfig() {
    return config;
  }

  /** The storage tier; null without one. */
  public FileKvStorage storage() {
    return storage;
  }

  // ---- matching and loading back ----

  /**
   * The longest cached prefix over all tiers: the device part, the host part after it, and (with
   * storage) pages read from storage into the host after that. Counts as a hit of the device part,
   * which {@link WritePolicy#WRITE_THROUGH_SELECTIVE} copies to the host once hit often enough.
   */
  @Override
  public PrefixMatch matchPrefix(String namespace, int[] key, int len) {
    PrefixMatch m = match(namespace, key, len, true);
    TreeNode last = m.lastNode();
    if (config.writePolicy() == WritePolicy.WRITE_THROUGH_SELECTIVE
        && last != null
        && last.parent != null
        && !last.onHost()
        && last.hitCount >= config.writeThroughThreshold()) {
      writeBackup(last);
    }
    if (storage != null && last != null && prefetch(namespace, key, len, m) > 0) {
      m = match(namespace, key, len, false);
    }
    return m;
  }

  /**
   * Brings the host part of {@code key[0..len)}'s cached prefix to the device, whole nodes from the
   * top while they fit in {@code maxTokens}, evicting unlocked device cache for room, and returns
   * the match afterwards. Loading is a copy on this thread: when it returns the KV is in place.
   */
  public PrefixMatch loadBack(String namespace, int[] key, int len, long maxTokens) {
    PrefixMatch m = match(namespace, key, len, false);
    if (m.hostHitLength() == 0 || m.lastNode() == null) {
      return m;
    }
    List<TreeNode> nodes = new ArrayList<>();
    for (TreeNode n = m.lastHostNode(); n != m.lastNode(); n = n.parent) {
      nodes.add(n);
    }
    java.util.Collections.reverse(nodes);
    int need = 0;
    int count = 0;
    for (TreeNode n : nodes) {
      if (need + n.key.length > maxTokens) {
        break;
      }
      need += n.key.length;
      count++;
    }
    if (count == 0) {
      return m;
    }
    nodes = nodes.subList(0, count);
    TreeNode top = m.lastNode();
    incLockRef(top); // the device part stays while eviction makes room below it
    for (TreeNode n : nodes) {
      n.loading = true;
      updateLeafSets(n);
    }
    try {
      int[] slots = allocator.alloc(need);
      if (slots == null) {
        evict(need - allocator.availableSize());
        slots = allocator.alloc(need);
      }
      if (slots == null) {
        return m;
      }
      long t0 = System.nanoTime();
      int off = 0;
      for (TreeNode n : nodes) {
        int l = n.key.length;
        hostPool.load(device, n.hostValue, 0, slots, off, l);
        n.value = Arrays.copyOfRange(slots, off, off + l);
        evictableSize += l;
        hostOnly -= l;
        off += l;
      }
      loadBackNanos += System.nanoTime() - t0;
      hostHitTokens += need;
    } finally {
      for (TreeNode n : nodes) {
        n.loading = false;
      }
      decLockRef(top);
      for (int i = nodes.size() - 1; i >= 0; i--) {
        updateLeafSets(nodes.get(i));
      }
      updateLeafSets(top);
    }
    return match(namespace, key, len, false);
  }

  /**
   * Reads the stored pages that follow the cached part of {@code key[0..len)} into the host tier,
   * as one new node below it. Returns the tokens read.
   */
  private int prefetch(String namespace, int[] key, int len, PrefixMatch m) {
    int cached = m.length() + m.hostHitLength();
    int pageTokens = hasher.pageTokens();
    int first = cached / pageTokens;
    int pages = len / pageTokens;
    PageHasher.Chain chain = hasher.chain(namespace, key, pages);
    int k = first;
    while (k < pages && storage.contains(chain.name(k))) {
      k++;
    }
    // Where the whole pages stop, a stored prefix may have ended inside the next page: its tail,
    // the longest first.
    String tailName = null;
    int tail = 0;
    for (int t = Math.min(pageTokens - 1, len - k * pageTokens);
        t > 0 && k * pageTokens + t > cached;
        t--) {
      String name = chain.tail(k, t);
      if (storage.contains(name)) {
        tailName = name;
        tail = t;
        break;
      }
    }
    if (k == first && tail == 0) {
      return 0;
    }
    TreeNode parent = m.lastHostNode();
    if (parent.parent != null && !parent.onHost() && !writeBackup(parent)) {
      return 0; // a host node needs its parent on the host
    }
    int n = k * pageTokens + tail - cached;
    parent.loading = true; // not evicted to make room for its own child
    updateLeafSets(parent);
    try {
      int[] slots = allocHost(n);
      if (slots == null) {
        return 0;
      }
      int got = cached;
      boolean whole = true; // every page up to the tail was read
      for (int p = first; p < k; p++) {
        byte[] kv = storage.get(chain.name(p), key, p * pageTokens);
        if (kv == null) {
          whole = false;
          break;
        }
        int from = Math.max(cached, p * pageTokens);
        int count = (p + 1) * pageTokens - from;
        hostPool.write(
            kv, (from - p * pageTokens) * hostPool.slotBytes(), slots, from - cached, count);
        got = (p + 1) * pageTokens;
      }
      if (tail > 0 && whole) {
        int base = k * pageTokens;
        byte[] kv = storage.get(tailName, key, base, tail);
        if (kv != null) {
          int from = Math.max(cached, base);
          hostPool.write(
              kv, (from - base) * hostPool.slotBytes(), slots, from - cached, base + tail - from);
          got = base + tail;
        }
      }
      int read = got - cached;
      if (read < n) {
        hostAllocator.free(slots, read, n - read);
      }
      if (read == 0) {
        return 0;
      }
      TreeNode node = new TreeNode(newNodeId(), Arrays.copyOfRange(key, cached, got), null);
      node.hostValue = Arrays.copyOf(slots, read);
      node.parent = parent;
      node.lastAccess = clock();
      addChild(parent, node);
      hostOnly += read;
      storageHitTokens += read;
      updateLeafSets(node);
      return read;
    } finally {
      parent.loading = false;
      updateLeafSets(parent);
    }
  }

  // ---- writing to the host and storage ----

  @Override
  void adopted(TreeNode node) {
    hostOnly -= node.key.length;
  }

  @Override
  void inserted(TreeNode leaf) {
    if (config.writePolicy() == WritePolicy.WRITE_THROUGH) {
      writeBackup(leaf);
    } else if (config.writePolicy() == WritePolicy.WRITE_THROUGH_SELECTIVE) {
      // A request that goes on from a cached node (the next chunk, its output) hits it.
      TreeNode p = leaf.parent;
      if (p.parent != null && p.onDevice() && ++p.hitCount >= config.writeThroughThreshold()) {
        writeBackup(p);
      }
    }
  }

  /**
   * Copies {@code x} and its ancestors not on the host yet to the host tier, top first (and their
   * completed pages to storage). False when the host has no room even after evicting.
   */
  private boolean writeBackup(TreeNode x) {
    ArrayDeque<TreeNode> chain = new ArrayDeque<>();
    int total = 0;
    for (TreeNode n = x; n.parent != null && !n.onHost(); n = n.parent) {
      chain.push(n);
      total += n.key.length;
    }
    if (total == 0) {
      return true;
    }
    // The node the chain hangs from is on the host (or a root): not evicted for the chain's room.
    TreeNode anchor = chain.peek().parent;
    anchor.loading = true;
    updateLeafSets(anchor);
    int[] slots;
    try {
      slots = allocHost(total);
    } finally {
      anchor.loading = false;
      updateLeafSets(anchor);
    }
    if (slots == null) {
      return false;
    }
    long t0 = System.nanoTime();
    int off = 0;
    for (TreeNode n : chain) {
      int l = n.key.length;
      hostPool.backup(device, n.value, 0, slots, off, l);
      n.hostValue = Arrays.copyOfRange(slots, off, off + l);
      off += l;
    }
    updateLeafSets(anchor);
    for (TreeNode n : chain) {
      updateLeafSets(n);
    }
    writeBackNanos += System.nanoTime() - t0;
    writeBackTokens += total;
    if (storage != null) {
      for (TreeNode n : chain) {
        storePages(n, n == x);
      }
    }
    return true;
  }

  /** Host slots for {@code n} tokens, evicting host-only nodes for room; null if none. */
  private int[] allocHost(int n) {
    int[] slots = hostAllocator.alloc(n);
    if (slots == null) {
      evictHost(n - hostAllocator.availableSize());
      slots = hostAllocator.alloc(n);
    }
    return slots;
  }

  /** Writes to storage the pages that end inside node {@code n} (all of them on the host). */
  private void storePages(TreeNode n, boolean tail) {
    int pageTokens = hasher.pageTokens();
    int end = 0;
    TreeNode root = n;
    for (; root.parent != null; root = root.parent) {
      end += root.key.length;
    }
    int start = end - n.key.length;
    int firstPage = start / pageTokens;
    int lastPage = end / pageTokens - 1;
    int tailTokens = tail ? end % pageTokens : 0;
    if (lastPage < firstPage && tailTokens == 0) {
      return;
    }
    int[] tokens = new int[end];
    int[] host = new int[end];
    int at = end;
    for (TreeNode t = n; t.parent != null; t = t.parent) {
      at -= t.key.length;
      System.arraycopy(t.key, 0, tokens, at, t.key.length);
      System.arraycopy(t.hostValue, 0, host, at, t.key.length);
    }
    PageHasher.Chain chain = hasher.chain(root.namespace, tokens, end / pageTokens);
    for (int p = firstPage; p <= lastPage; p++) {
      String name = chain.name(p);
      if (!storage.contains(name)) {
        byte[] kv = new byte[pageTokens * hostPool.slotBytes()];
        hostPool.read(host, p * pageTokens, pageTokens, kv, 0);
        storage.put(name, tokens, p * pageTokens, kv);
      }
    }
    if (tailTokens > 0) {
      // The prefix ends inside a page: its tail is stored too, or a returning prefix would compute
      // up to a page's worth of tokens again.
      int from = end - tailTokens;
      String name = chain.tail(end / pageTokens, tailTokens);
      if (!storage.contains(name)) {
        byte[] kv = new byte[tailTokens * hostPool.slotBytes()];
        hostPool.read(host, from, tailTokens, kv, 0);
        storage.put(name, tokens, from, tailTokens, kv);
      }
    }
  }

  // ---- eviction ----

  @Override
  void evictFromDevice(TreeNode x) {
    if (!x.onHost() && config.writePolicy() == WritePolicy.WRITE_BACK) {
      writeBackup(x);
    }
    if (x.onHost()) {
      hostOnly += x.key.length;
      dropDeviceValue(x);
    } else {
      if (!x.isLeaf()) {
        throw new IllegalStateException("node " + x.id + " has children but no host copy");
      }
      super.evictFromDevice(x);
    }
  }

  /** Frees at least {@code tokens} host slots if that many are evictable; returns how many. */
  public int evictHost(int tokens) {
    int freed = 0;
    while (freed < tokens && !hostLeaves.isEmpty()) {
      TreeNode x = hostLeaves.pollOldest();
      hostAllocator.free(x.hostValue);
      freed += x.key.length;
      if (x.onDevice()) {
        x.hostValue = null; // the device copy stays
        updateLeafSets(x);
        updateLeafSets(x.parent);
      } else {
        hostOnly -= x.key.length;
        deleteLeaf(x);
      }
    }
    return freed;
  }

  @Override
  void updateLeafSets(TreeNode node) {
    super.updateLeafSets(node);
    hostLeaves.update(node);
  }

  @Override
  void touch(TreeNode node, long now) {
    if (node.lastAccess != now) {
      // Out of the host order while its access time (the order's key) changes.
      hostLeaves.remove(node);
      super.touch(node, now);
      hostLeaves.update(node);
    }
  }

  @Override
  public void reset() {
    super.reset();
    hostLeaves.clear();
    hostAllocator.clear();
    hostOnly = 0;
  }

  // ---- inspection ----

  /** Tokens whose KV only the host tier holds. */
  public int hostOnlySize() {
    return hostOnly;
  }

  @Override
  public TierStats tierStats() {
    StorageCounters s = storage == null ? new StorageCounters() : storage.counters();
    int pages = storage == null ? 0 : storage.pages();
    long slotBytes = hostPool.slotBytes();
    return new TierStats(
        hostAllocator.size(),
        hostAllocator.size() - hostAllocator.availableSize(),
        hostOnly,
        pages,
        storage == null ? 0 : (long) pages * storage.pageTokens(),
        hostHitTokens,
        storageHitTokens,
        hostHitTokens * slotBytes,
        loadBackNanos,
        writeBackTokens,
        writeBackTokens * slotBytes,
        writeBackNanos,
        s.readBytes(),
        s.readNanos(),
        s.writtenBytes(),
        s.writeNanos(),
        s.corruptPages());
  }

  @Override
  void verifyNode(TreeNode node) {
    if (node.hostValue != null) {
      if (node.hostValue.length != node.key.length) {
        throw new IllegalStateException(
            "node " + node.id + " has key " + node.key.length + ", host " + node.hostValue.length);
      }
      if (node.parent.parent != null && node.parent.hostValue == null) {
        throw new IllegalStateException("node " + node.id + " is on the host, its parent not");
      }
    }
    if (node.loading) {
      throw new IllegalStateException("node " + node.id + " is still loading");
    }
    if (EvictableLeaves.HOST.test(node) != hostLeaves.contains(node)) {
      throw new IllegalStateException("node " + node.id + " host-evictable status is wrong");
    }
  }

  /**
   * Checks every tier's invariants (the device's as {@link #verifyInvariants}, then: host slots
   * owned by one node each and taken in the host allocator, host-only tokens adding up) and returns
   * every host slot in use. Throws {@link IllegalStateException} on the first violation.
   */
  public int[] verifyTiers() {
    verifyInvariants();
    Set<Integer> seen = new HashSet<>();
    int[] only = {0};
    forEachNode(
        n -> {
          if (n.hostValue != null) {
            for (int s : n.hostValue) {
              if (!seen.add(s) || hostAllocator.isFree(s)) {
                throw new IllegalStateException("host slot " + s + " is free or owned twice");
              }
            }
            if (n.value == null) {
              only[0] += n.key.length;
            }
          }
        });
    if (seen.size() != hostAllocator.size() - hostAllocator.availableSize()) {
      throw new IllegalStateException(
          "host slots taken "
              + (hostAllocator.size() - hostAllocator.availableSize())
              + ", owned by nodes "
              + seen.size());
    }
    if (only[0] != hostOnly) {
      throw new IllegalStateException("host-only tokens " + hostOnly + ", counted " + only[0]);
    }
    return seen.stream().mapToInt(Integer::intValue).toArray();
  }

  @Override
  public void close() {
    if (storage != null) {
      storage.close();
    }
  }
}
