package io.flinfer.memcache;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class PoolsTest {
  @Test
  void reqToTokenPoolHandsOutEachSlotOnceAndStoresRows() {
    ReqToTokenPool p = new ReqToTokenPool(3, 8);
    int[] slots = p.alloc(3);
    assertThat(slots).containsExactlyInAnyOrder(0, 1, 2);
    assertThat(p.alloc(1)).isNull();
    assertThat(p.allocOne()).isEqualTo(-1);
    p.write(slots[1], 2, new int[] {7, 8, 9});
    assertThat(p.get(slots[1], 3)).isEqualTo(8);
    p.free(slots[1]);
    assertThat(p.availableSize()).isEqualTo(1);
    // A double free while other rows are taken: two requests would otherwise share a row.
    assertThatThrownBy(() -> p.free(slots[1])).hasMessageContaining("twice");
    assertThat(p.availableSize()).isEqualTo(1);
    assertThatThrownBy(() -> p.write(slots[0], 7, new int[] {1, 2}))
        .isInstanceOf(IndexOutOfBoundsException.class);
    p.free(slots[0]);
    p.free(slots[2]);
    assertThatThrownBy(() -> p.free(slots[2])).hasMessageContaining("twice");
  }

  @Test
  void simpleAllocatorNeverHandsOutThePaddingSlotAndCatchesDoubleFrees() {
    SimpleTokenToKvPoolAllocator a = new SimpleTokenToKvPoolAllocator(5);
    int[] all = a.alloc(5);
    assertThat(all).containsExactlyInAnyOrder(1, 2, 3, 4, 5);
    assertThat(a.alloc(1)).isNull();
    a.free(new int[] {3, 1}, 0, 2);
    assertThat(a.availableSize()).isEqualTo(2);
    assertThatThrownBy(() -> a.free(new int[] {3})).hasMessageContaining("twice");
    assertThatThrownBy(() -> a.free(new int[] {0})).hasMessageContaining("not a KV slot");
  }

  @Test
  void groupedFreesAreReleasedTogether() {
    SimpleTokenToKvPoolAllocator a = new SimpleTokenToKvPoolAllocator(4);
    int[] s = a.alloc(4);
    a.freeGroupBegin();
    a.free(s, 0, 2);
    a.free(s, 2, 2);
    assertThat(a.availableSize()).isZero();
    a.freeGroupEnd();
    assertThat(a.availableSize()).isEqualTo(4);
  }

  @org.junit.jupiter.params.ParameterizedTest
  @org.junit.jupiter.params.provider.EnumSource(KvStoreType.class)
  void kvPoolStoresRowsPerLayerInItsStoreType(KvStoreType type) {
    KvPool kv = new KvPool(4, 2, 2, 4, 1, type);
    // Values every store type holds exactly (8.5 needs four mantissa bits: not FP8's).
    float[] k = {1, 2, 3, 4, 5, 6, 7, type.isFp8() ? 0.375f : 8.5f};
    float[] v = {-1, -2, -3, -4, -5, -6, -7, -8};
    kv.setKv(1, 3, k, 0, v, 0);
    float[] back = new float[8];
    kv.readKeys(1, 3, 0, 8, back, 0);
    assertThat(back).containsExactly(k);
    kv.readValues(1, 3, 4, 4, back, 0);
    assertThat(back).startsWith(-5, -6, -7, -8);
    kv.readKeys(0, 3, 0, 8, back, 0);
    assertThat(back).containsOnly(0f);
    KvRows rows = kv.keys(1);
    int values =
        type == KvStoreType.FP32
            ? rows.floats().length
            : type.isFp8() ? rows.bytes().length : rows.halves().length;
    assertThat(values).isEqualTo(5 * 8);
  }

  @Test
  void cellSizeCountsKeysAndValuesOfEveryLayer() {
    assertThat(KvPool.cellSizeBytes(12, 12, 64, 4)).isEqualTo(12L * 12 * 64 * 2 * 4);
  }
}
