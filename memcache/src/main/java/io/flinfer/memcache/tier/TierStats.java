package io.flinfer.memcache.tier;

/**
 * A snapshot of the tiers below the device pool, in tokens unless named otherwise.
 *
 * @param hostTotalTokens slots of the host tier
 * @param hostUsedTokens host slots holding some node's KV (a copy of the device's, or the only one)
 * @param hostOnlyTokens tokens whose KV only the host tier holds (evicted from the device)
 * @param storagePages pages in the storage tier
 * @param storageTokens tokens those pages hold
 * @param hostHitTokens prefix tokens loaded back from the host tier for requests, over all time
 * @param storageHitTokens prefix tokens read from the storage tier, over all time
 * @param loadBackBytes bytes copied host to device
 * @param loadBackNanos time spent copying them
 * @param writeBackTokens tokens copied device to host
 * @param writeBackBytes those tokens' bytes
 * @param writeBackNanos time spent copying them
 * @param storageReadBytes KV bytes read from storage files
 * @param storageReadNanos time spent reading them
 * @param storageWrittenBytes KV bytes written to storage files
 * @param storageWriteNanos time the writer spent writing them
 * @param storageCorruptPages pages found damaged and treated as misses
 */
public record TierStats(
    int hostTotalTokens,
    int hostUsedTokens,
    int hostOnlyTokens,
    int storagePages,
    long storageTokens,
    long hostHitTokens,
    long storageHitTokens,
    long loadBackBytes,
    long loadBackNanos,
    long writeBackTokens,
    long writeBackBytes,
    long writeBackNanos,
    long storageReadBytes,
    long storageReadNanos,
    long storageWrittenBytes,
    long storageWriteNanos,
    long storageCorruptPages) {

  /** No tiers below the device. */
  public static final TierStats NONE =
      new TierStats(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
}
