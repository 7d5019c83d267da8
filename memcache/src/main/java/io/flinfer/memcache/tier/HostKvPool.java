package io.flinfer.memcache.tier;

import io.flinfer.memcache.KvPoolSizingException;
import io.flinfer.memcache.KvSlotBytes;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The host tier's KV storage (SGLang's {@code HostKVCache}): for each host slot, the bytes of one
 * device slot over all layers, off the Java heap. Owns the memory; which slots are taken is its
 * allocator's business. Slot 0 is a padding slot, as in the device pool, so slot numbers from the
 * same allocator classes fit.
 *
 * <p>Bytes are little-endian whatever the machine, so a page written to the storage tier reads back
 * the same on any host.
 */
public final class HostKvPool {
  /** At most this many bytes per direct buffer (a buffer is indexed by int). */
  private static final long CHUNK_BYTES = 1L << 30;

  private final int size;
  private final int slotBytes;
  private final int slotsPerChunk;
  private final ByteBuffer[] chunks;

  /** A pool of {@code size} usable slots of {@code slotBytes} bytes each. */
  public HostKvPool(int size, int slotBytes) {
    if (size <= 0 || slotBytes <= 0) {
      throw new IllegalArgumentException(
          "host pool dimensions must be positive: size=" + size + " slotBytes=" + slotBytes);
    }
    if (slotBytes > CHUNK_BYTES) {
      throw new IllegalArgumentException("a slot of " + slotBytes + " bytes is too large");
    }
    this.size = size;
    this.slotBytes = slotBytes;
    this.slotsPerChunk = (int) (CHUNK_BYTES / slotBytes);
    long rows = size + 1L;
    int n = (int) ((rows + slotsPerChunk - 1) / slotsPerChunk);
    this.chunks = new ByteBuffer[n];
    try {
      for (int i = 0; i < n; i++) {
        long slots = Math.min(slotsPerChunk, rows - (long) i * slotsPerChunk);
        chunks[i] = ByteBuffer.allocateDirect((int) (slots * slotBytes));
        chunks[i].order(ByteOrder.LITTLE_ENDIAN);
      }
    } catch (OutOfMemoryError e) {
      throw new KvPoolSizingException(
          "cannot allocate the host KV pool: "
              + rows
              + " slots x "
              + slotBytes
              + " bytes of direct memory (raise -XX:MaxDirectMemorySize or lower the host pool)",
          e);
    }
  }

  /** Usable slots, numbered 1..size. */
  public int size() {
    return size;
  }

  public int slotBytes() {
    return slotBytes;
  }

  /** Total bytes held off-heap. */
  public long bytes() {
    return (size + 1L) * slotBytes;
  }

  /** A view of one slot's bytes, positioned at its start and limited to its end. */
  private ByteBuffer slot(int hostSlot) {
    if (hostSlot <= 0 || hostSlot > size) {
      throw new IndexOutOfBoundsException("host slot " + hostSlot + " of 1.." + size);
    }
    ByteBuffer chunk = chunks[hostSlot / slotsPerChunk];
    int at = (hostSlot % slotsPerChunk) * slotBytes;
    return chunk.duplicate().order(ByteOrder.LITTLE_ENDIAN).position(at).limit(at + slotBytes);
  }

  /** Copies device slots {@code device[dOff..dOff+n)} to host slots {@code host[hOff..]}. */
  public void backup(KvSlotBytes from, int[] device, int dOff, int[] host, int hOff, int n) {
    checkSlotBytes(from);
    for (int i = 0; i < n; i++) {
      from.readSlot(device[dOff + i], slot(host[hOff + i]));
    }
  }

  /** Copies host slots {@code host[hOff..hOff+n)} back to device slots {@code device[dOff..]}. */
  public void load(KvSlotBytes to, int[] host, int hOff, int[] device, int dOff, int n) {
    checkSlotBytes(to);
    for (int i = 0; i < n; i++) {
      to.writeSlot(device[dOff + i], slot(host[hOff + i]));
    }
  }

  /** Copies host slots {@code host[off..off+n)} into {@code dst[dstOff..]}, slot after slot. */
  public void read(int[] host, int off, int n, byte[] dst, int dstOff) {
    for (int i = 0; i < n; i++) {
      slot(host[off + i]).get(dst, dstOff + i * slotBytes, slotBytes);
    }
  }

  /** Fills host slots {@code host[off..off+n)} from {@code src[srcOff..]}, slot after slot. */
  public void write(byte[] src, int srcOff, int[] host, int off, int n) {
    for (int i = 0; i < n; i++) {
      slot(host[off + i]).put(src, srcOff + i * slotBytes, slotBytes);
    }
  }

  private void checkSlotBytes(KvSlotBytes device) {
    if (device.slotBytes() != slotBytes) {
      throw new IllegalArgumentException(
          "device slots have " + device.slotBytes() + " bytes, host slots " + slotBytes);
    }
  }
}
