package io.flinfer.memcache.tier;

/** When a prefix's KV is copied to the host tier (SGLang's {@code hicache_write_policy}). */
public enum WritePolicy {
  /** As soon as it is cached: eviction from the device then only frees device slots. */
  WRITE_THROUGH,
  /** Once its node has been hit a threshold number of times; colder prefixes are not kept. */
  WRITE_THROUGH_SELECTIVE,
  /** Only when the device evicts it: no copy for prefixes that never leave the device. */
  WRITE_BACK
}
