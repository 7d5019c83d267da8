package io.flinfer.memcache;

import java.nio.ByteBuffer;

/**
 * A KV pool seen slot by slot as bytes: everything one slot holds over all layers (keys, then
 * values, layer after layer), exactly as the pool stores it. The tiers below the pool keep these
 * bytes, so a slot written back from them holds the very values it held before.
 */
public interface KvSlotBytes {

  /** Bytes of one slot over all layers. */
  int slotBytes();

  /** Puts slot {@code slot}'s bytes into {@code dst}, advancing its position by a slot. */
  void readSlot(int slot, ByteBuffer dst);

  /** Overwrites slot {@code slot} with a slot's bytes from {@code src}, advancing its position. */
  void writeSlot(int slot, ByteBuffer src);
}
