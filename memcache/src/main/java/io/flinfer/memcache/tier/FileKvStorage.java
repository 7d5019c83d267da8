package io.flinfer.memcache.tier;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import java.util.zip.CRC32C;

/**
 * The storage tier (SGLang's {@code HiCacheFile}): one file per page of KV, named by its {@link
 * PageHasher} name, in a directory that outlives the job, under a size limit with least recently
 * used pages deleted first. Writes go through one background thread, so the scheduler never waits
 * for a disk; a page is visible once its file is complete (written aside, then renamed).
 *
 * <p>Several stores may share a directory (the subtasks of a job on one machine): a page another
 * store wrote is found on disk when the index misses it, and after every eighth of the limit
 * written a store lists the directory again and trims it as a whole, least recently used pages
 * first (last use is the file's modification time), so the directory stays within the limit plus
 * what the stores wrote since their last listing.
 *
 * <p>A file holds a header (magic, page tokens, slot bytes), the page's tokens, its KV bytes and a
 * CRC32C of all of it. A file that is short, from another layout, holds other tokens or fails its
 * checksum is a miss (and is deleted), never KV.
 */
public final class FileKvStorage implements AutoCloseable {
  private static final int MAGIC = 0x464b5631; // "FKV1"
  private static final int HEADER = 12;

  private final Path dir;
  private final long maxBytes;
  private final int pageTokens;
  private final int slotBytes;
  private final int fileBytes;
  private final long maxPendingBytes;

  /** Stored pages, least recently used first. Guarded by {@code this}. */
  private final LinkedHashMap<String, Integer> index = new LinkedHashMap<>(16, 0.75f, true);

  private final Set<String> queued = new HashSet<>();
  private long storedBytes;
  private long pendingBytes;
  private long writtenSinceScan; // written by the writer thread only
  private final ExecutorService writer;
  private final StorageCounters counters = new StorageCounters();

  /**
   * Opens (creating it if needed) the store in {@code dir} for pages of {@code pageTokens} tokens
   * of {@code slotBytes} bytes each, holding at most {@code maxBytes}. Pages left by an earlier run
   * are found again, in their last-use order.
   */
  public FileKvStorage(Path dir, long maxBytes, int pageTokens, int slotBytes) {
    if (maxBytes <= 0 || pageTokens <= 0 || slotBytes <= 0) {
      throw new IllegalArgumentException(
          "storage limits must be positive: bytes="
              + maxBytes
              + " pageTokens="
              + pageTokens
              + " slotBytes="
              + slotBytes);
    }
    long file = HEADER + 4L * pageTokens + (long) pageTokens * slotBytes + 8;
    if (file > Integer.MAX_VALUE - 8) {
      throw new IllegalArgumentException("a page of " + file + " bytes is too large");
    }
    this.dir = dir;
    this.maxBytes = maxBytes;
    this.pageTokens = pageTokens;
    this.slotBytes = slotBytes;
    this.fileBytes = (int) file;
    this.maxPendingBytes = Math.max(fileBytes, Math.min(maxBytes, 256L << 20));
    try {
      Files.createDirectories(dir);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot create the KV storage directory " + dir, e);
    }
    delete(scan());
    this.writer =
        Executors.newSingleThreadExecutor(
            r -> {
              Thread t = new Thread(r, "kv-storage-writer");
              t.setDaemon(true);
              return t;
            });
  }

  public int pageTokens() {
    return pageTokens;
  }

  /** Bytes of one page's file. */
  public int pageFileBytes() {
    return fileBytes;
  }

  /** Bytes of the file of a page of {@code tokens} tokens (a whole page, or a tail). */
  private int fileBytes(int tokens) {
    return HEADER + 4 * tokens + tokens * slotBytes + 8;
  }

  /** The tokens of a page whose file has {@code size} bytes; 0 if no page has that size. */
  private int tokensOf(long size) {
    long body = size - HEADER - 8;
    long n = body / (4 + slotBytes);
    return body > 0 && body % (4 + slotBytes) == 0 && n <= pageTokens ? (int) n : 0;
  }

  /**
   * Lists the directory and makes it the index, oldest use first (pages of an earlier run, of other
   * stores in the directory), dropping what is gone; returns the pages the limit evicts. Partial
   * writes older than a minute are left by a crashed writer and are deleted.
   */
  private List<String> scan() {
    record Found(String name, FileTime mtime, long size) {}
    List<Found> found = new ArrayList<>();
    long staleBefore = System.currentTimeMillis() - 60_000;
    try (Stream<Path> files = Files.walk(dir, 2)) {
      for (Iterator<Path> it = files.iterator(); it.hasNext(); ) {
        Path p = it.next();
        String f = p.getFileName().toString();
        boolean tmp = f.contains(".tmp");
        if (!tmp && !f.endsWith(".kv")) {
          continue;
        }
        try {
          BasicFileAttributes a = Files.readAttributes(p, BasicFileAttributes.class);
          if (tmp && a.lastModifiedTime().toMillis() < staleBefore) {
            Files.deleteIfExists(p);
          } else if (!tmp && a.isRegularFile()) {
            found.add(new Found(f.substring(0, f.length() - 3), a.lastModifiedTime(), a.size()));
          }
        } catch (NoSuchFileException e) {
          // Deleted by another store meanwhile.
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read the KV storage directory " + dir, e);
    } catch (UncheckedIOException e) {
      throw new UncheckedIOException("cannot read the KV storage directory " + dir, e.getCause());
    }
    found.sort((a, b) -> a.mtime().compareTo(b.mtime()));
    synchronized (this) {
      index.clear();
      storedBytes = 0;
      for (Found f : found) {
        if (tokensOf(f.size()) > 0) {
          index.put(f.name(), (int) f.size());
          storedBytes += f.size();
        }
      }
      return trim();
    }
  }

  private void delete(List<String> names) {
    for (String name : names) {
      try {
        Files.deleteIfExists(path(name));
      } catch (IOException e) {
        // Out of the index already; a later listing finds it and the limit trims it then.
      }
    }
  }

  private Path path(String name) {
    return dir.resolve(name.substring(0, 2)).resolve(name + ".kv");
  }

  /**
   * Whether a page of that name is stored: in the index, or on disk, written by another store
   * sharing the directory (then it joins the index).
   */
  public boolean contains(String name) {
    synchronized (this) {
      if (index.containsKey(name)) {
        return true;
      }
    }
    Path p = path(name);
    long size;
    try {
      size = Files.size(p);
    } catch (IOException e) {
      return false;
    }
    if (tokensOf(size) == 0) {
      return false;
    }
    synchronized (this) {
      if (index.putIfAbsent(name, (int) size) == null) {
        storedBytes += size;
      }
    }
    return true;
  }

  /**
   * The KV bytes of page {@code name}, which must hold {@code tokens[off..off+pageTokens)}; null
   * when it is not stored or its file is damaged.
   */
  public byte[] get(String name, int[] tokens, int off) {
    return get(name, tokens, off, pageTokens);
  }

  /** As {@link #get(String, int[], int)} for a page of {@code n} tokens (a tail if less). */
  public byte[] get(String name, int[] tokens, int off, int n) {
    if (!contains(name)) {
      return null;
    }
    synchronized (this) {
      index.get(name); // a use: last in the eviction order
    }
    long t0 = System.nanoTime();
    Path p = path(name);
    byte[] file;
    try {
      file = Files.readAllBytes(p);
    } catch (NoSuchFileException e) {
      forget(name, false);
      return null;
    } catch (IOException e) {
      forget(name, true);
      return null;
    }
    byte[] kv = decode(file, tokens, off, n);
    if (kv == null) {
      forget(name, true);
      return null;
    }
    try {
      Files.setLastModifiedTime(p, FileTime.from(java.time.Instant.now()));
    } catch (IOException e) {
      // The order after a restart is only a hint.
    }
    counters.read(kv.length, System.nanoTime() - t0);
    return kv;
  }

  private byte[] decode(byte[] file, int[] tokens, int off, int n) {
    if (file.length != fileBytes(n)) {
      return null;
    }
    CRC32C crc = new CRC32C();
    crc.update(file, 0, file.length - 8);
    ByteBuffer b = ByteBuffer.wrap(file).order(ByteOrder.LITTLE_ENDIAN);
    if (b.getLong(file.length - 8) != crc.getValue()
        || b.getInt() != MAGIC
        || b.getInt() != n
        || b.getInt() != slotBytes) {
      return null;
    }
    for (int i = 0; i < n; i++) {
      if (b.getInt() != tokens[off + i]) {
        return null;
      }
    }
    byte[] kv = new byte[n * slotBytes];
    b.get(kv);
    return kv;
  }

  private void forget(String name, boolean damaged) {
    synchronized (this) {
      Integer size = index.remove(name);
      if (size != null) {
        storedBytes -= size;
      }
    }
    if (damaged) {
      counters.corrupt();
      try {
        Files.deleteIfExists(path(name));
      } catch (IOException e) {
        // Gone from the index: it is never read again in this run.
      }
    }
  }

  /**
   * Stores page {@code name}: tokens {@code tokens[off..off+pageTokens)} and their KV bytes (taken
   * over, not copied). Returns at once; the write happens in the background. Skipped when the page
   * is stored or queued already, or when writes are behind by more than a bounded amount.
   */
  public void put(String name, int[] tokens, int off, byte[] kv) {
    put(name, tokens, off, pageTokens, kv);
  }

  /**
   * As {@link #put(String, int[], int, byte[])} for a page of {@code n} tokens (a tail if less).
   */
  public void put(String name, int[] tokens, int off, int n, byte[] kv) {
    if (n <= 0 || n > pageTokens || kv.length != n * slotBytes) {
      throw new IllegalArgumentException(
          "a page of " + n + " tokens holds " + n * slotBytes + " KV bytes, not " + kv.length);
    }
    int size = fileBytes(n);
    synchronized (this) {
      if (index.containsKey(name) || queued.contains(name)) {
        return;
      }
      if (pendingBytes + size > maxPendingBytes) {
        counters.skipped();
        return;
      }
      queued.add(name);
      pendingBytes += size;
    }
    int[] pageTokenIds = java.util.Arrays.copyOfRange(tokens, off, off + n);
    writer.execute(() -> write(name, pageTokenIds, kv));
  }

  private void write(String name, int[] tokens, byte[] kv) {
    long t0 = System.nanoTime();
    int size = fileBytes(tokens.length);
    ByteBuffer b = ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN);
    b.putInt(MAGIC).putInt(tokens.length).putInt(slotBytes);
    for (int t : tokens) {
      b.putInt(t);
    }
    b.put(kv);
    CRC32C crc = new CRC32C();
    crc.update(b.array(), 0, size - 8);
    b.putLong(crc.getValue());
    Path target = path(name);
    boolean ok = false;
    try {
      Files.createDirectories(target.getParent());
      Path tmp = target.resolveSibling(name + ".tmp" + Thread.currentThread().getId());
      Files.write(tmp, b.array());
      try {
        Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE);
      } catch (AtomicMoveNotSupportedException e) {
        Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING);
      }
      ok = true;
    } catch (IOException e) {
      counters.failed();
    }
    List<String> evicted = new ArrayList<>();
    synchronized (this) {
      queued.remove(name);
      pendingBytes -= size;
      if (ok) {
        // contains() may have found the file on disk between the rename and here.
        if (index.put(name, size) == null) {
          storedBytes += size;
        }
        evicted = trim();
      }
    }
    delete(evicted);
    if (ok) {
      counters.written(kv.length, System.nanoTime() - t0);
      writtenSinceScan += size;
      if (writtenSinceScan >= maxBytes / 8) {
        // What other stores in the directory wrote counts against the same limit.
        writtenSinceScan = 0;
        try {
          delete(scan());
        } catch (UncheckedIOException e) {
          // The write itself succeeded; the next listing tries again.
        }
      }
    }
  }

  /** Drops least recently used pages from the index until under the limit; returns their names. */
  private List<String> trim() {
    List<String> out = new ArrayList<>();
    Iterator<Map.Entry<String, Integer>> it = index.entrySet().iterator();
    while (storedBytes > maxBytes && it.hasNext()) {
      Map.Entry<String, Integer> e = it.next();
      it.remove();
      storedBytes -= e.getValue();
      out.add(e.getKey());
    }
    counters.evicted(out.size());
    return out;
  }

  /** Waits until every write queued so far is on disk. */
  public void flush() {
    try {
      writer.submit(() -> {}).get(1, TimeUnit.MINUTES);
    } catch (Exception e) {
      throw new IllegalStateException("storage writes did not finish", e);
    }
  }

  /** Pages stored now. */
  public synchronized int pages() {
    return index.size();
  }

  public synchronized long storedBytes() {
    return storedBytes;
  }

  public StorageCounters counters() {
    return counters;
  }

  /** Finishes queued writes and stops the writer. */
  @Override
  public void close() {
    writer.shutdown();
    try {
      writer.awaitTermination(1, TimeUnit.MINUTES);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
