package io.flinfer.memcache.tier;

import java.util.concurrent.atomic.AtomicLong;

/** What the storage tier has done, over all time; updated from the writer thread as well. */
public final class StorageCounters {
  private final AtomicLong readBytes = new AtomicLong();
  private final AtomicLong readNanos = new AtomicLong();
  private final AtomicLong writtenBytes = new AtomicLong();
  private final AtomicLong writeNanos = new AtomicLong();
  private final AtomicLong corruptPages = new AtomicLong();
  private final AtomicLong skippedWrites = new AtomicLong();
  private final AtomicLong failedWrites = new AtomicLong();
  private final AtomicLong evictedPages = new AtomicLong();

  void read(long bytes, long nanos) {
    readBytes.addAndGet(bytes);
    readNanos.addAndGet(nanos);
  }

  void written(long bytes, long nanos) {
    writtenBytes.addAndGet(bytes);
    writeNanos.addAndGet(nanos);
  }

  void corrupt() {
    corruptPages.incrementAndGet();
  }

  void skipped() {
    skippedWrites.incrementAndGet();
  }

  void failed() {
    failedWrites.incrementAndGet();
  }

  void evicted(int pages) {
    evictedPages.addAndGet(pages);
  }

  public long readBytes() {
    return readBytes.get();
  }

  public long readNanos() {
    return readNanos.get();
  }

  public long writtenBytes() {
    return writtenBytes.get();
  }

  public long writeNanos() {
    return writeNanos.get();
  }

  /** Pages found damaged (short, foreign, other tokens, bad checksum) and treated as misses. */
  public long corruptPages() {
    return corruptPages.get();
  }

  /** Pages not written because writes were too far behind. */
  public long skippedWrites() {
    return skippedWrites.get();
  }

  public long failedWrites() {
    return failedWrites.get();
  }

  /** Pages deleted to stay under the size limit. */
  public long evictedPages() {
    return evictedPages.get();
  }
}
