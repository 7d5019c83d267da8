package io.flinfer.memcache.tier;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinfer.memcache.KvPool;
import io.flinfer.memcache.KvStoreType;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class HostKvPoolTest {

  /** A slot's stored values, as the pool gives them back. */
  private static float[] slotValues(KvPool kv, int slot) {
    int w = kv.rowWidth();
    float[] out = new float[2 * kv.layers() * w];
    for (int l = 0; l < kv.layers(); l++) {
      kv.readKeys(l, slot, 0, w, out, 2 * l * w);
      kv.readValues(l, slot, 0, w, out, (2 * l + 1) * w);
    }
    return out;
  }

  @ParameterizedTest
  @EnumSource(KvStoreType.class)
  void aSlotCopiedToTheHostAndBackHoldsTheSameValues(KvStoreType type) {
    KvPool kv = new KvPool(32, 3, 2, 8, 1, type, 0.5f, 2f);
    Random rnd = new Random(7);
    float[] k = new float[16];
    float[] v = new float[16];
    for (int slot = 1; slot <= 32; slot++) {
      for (int l = 0; l < 3; l++) {
        for (int i = 0; i < 16; i++) {
          k[i] = (float) rnd.nextGaussian() * 3;
          v[i] = (float) rnd.nextGaussian() * 3;
        }
        kv.setKv(l, slot, k, 0, v, 0);
      }
    }
    HostKvPool host = new HostKvPool(64, kv.slotBytes());
    assertThat(kv.slotBytes()).isEqualTo(3 * 2 * 16 * type.bytes());
    int[] device = {5, 9, 17};
    int[] hostSlots = {64, 1, 30};
    float[][] before = {slotValues(kv, 5), slotValues(kv, 9), slotValues(kv, 17)};
    host.backup(kv, device, 0, hostSlots, 0, 3);
    host.load(kv, hostSlots, 0, new int[] {2, 3, 4}, 0, 3);
    for (int i = 0; i < 3; i++) {
      assertThat(slotValues(kv, 2 + i)).containsExactly(before[i]);
    }
    byte[] bytes = new byte[3 * kv.slotBytes()];
    host.read(hostSlots, 0, 3, bytes, 0);
    host.write(bytes, 0, new int[] {10, 11, 12}, 0, 3);
    host.load(kv, new int[] {10, 11, 12}, 0, new int[] {20, 21, 22}, 0, 3);
    for (int i = 0; i < 3; i++) {
      assertThat(slotValues(kv, 20 + i)).containsExactly(before[i]);
    }
  }
}
