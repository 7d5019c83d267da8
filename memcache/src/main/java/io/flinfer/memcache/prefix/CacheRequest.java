package io.flinfer.memcache.prefix;

/**
 * What a prefix cache keeps about one request (the cache fields of SGLang's {@code Req}): its
 * namespace, request slot, the KV slots of its cached prefix, the tree node that prefix ends at
 * (locked while the request runs), and how much of its row is owned by the cache.
 */
public final class CacheRequest {
  private static final int[] EMPTY = new int[0];

  private final String namespace;
  int reqPoolIdx = -1;
  int[] prefixIndices = EMPTY;
  TreeNode lastNode;
  int cacheProtectedLen;

  /**
   * @param namespace the tenant or cache salt; "" is the shared default
   */
  public CacheRequest(String namespace) {
    this.namespace = namespace == null ? "" : namespace;
  }

  public String namespace() {
    return namespace;
  }

  public int reqPoolIdx() {
    return reqPoolIdx;
  }

  public void setReqPoolIdx(int reqPoolIdx) {
    this.reqPoolIdx = reqPoolIdx;
  }

  /** KV slots of the cached prefix; the request's row holds them at positions 0.. */
  public int[] prefixIndices() {
    return prefixIndices;
  }

  public TreeNode lastNode() {
    return lastNode;
  }

  /** Positions {@code [0, cacheProtectedLen)} of the request's row belong to the cache. */
  public int cacheProtectedLen() {
    return cacheProtectedLen;
  }

  /** Takes a match as this request's prefix (before the request is admitted). */
  public void setPrefix(PrefixMatch match) {
    this.prefixIndices = match.indices();
    this.lastNode = match.lastNode();
    this.cacheProtectedLen = match.indices().length;
  }

  /** Forgets the prefix (a retracted request matches again when readmitted). */
  public void resetPrefix() {
    this.prefixIndices = EMPTY;
    this.lastNode = null;
    this.cacheProtectedLen = 0;
  }
}
