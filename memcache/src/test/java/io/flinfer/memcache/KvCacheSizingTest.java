package io.flinfer.memcache;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class KvCacheSizingTest {
  private static final long GIB = 1L << 30;
  // Llama-2-110M shapes: 12 layers x 12 kv heads x 64 x 2 x fp32 = 73,728 bytes per token.
  private static final long CELL = KvPool.cellSizeBytes(12, 12, 64, 4);

  @Test
  void staticFractionOfMemoryHoldsTheRequestTableAndWholePagesOfKv() {
    KvCacheSizing s =
        KvCacheSizing.compute(
            new KvCacheSizing.Inputs(16 * GIB, 12 * GIB, 0.8, CELL, 16, 1024, 0, 256));
    long budget = 12 * GIB - (long) (16 * GIB * 0.2) - 256L * 4 * 1024;
    assertThat(s.maxRunningRequests()).isEqualTo(256);
    assertThat(s.maxTotalTokens()).isEqualTo(budget / CELL / 16 * 16);
    assertThat(s.maxTotalTokens() % 16).isZero();
    assertThat(s.warnings()).isEmpty();
  }

  @Test
  void explicitTokensAreHonouredWhenTheyFitAndCappedWithAWarningWhenNot() {
    KvCacheSizing small =
        KvCacheSizing.compute(
            new KvCacheSizing.Inputs(16 * GIB, 12 * GIB, 0.8, CELL, 16, 1024, 5000, 64));
    assertThat(small.maxTotalTokens()).isEqualTo(4992);
    KvCacheSizing big =
        KvCacheSizing.compute(
            new KvCacheSizing.Inputs(16 * GIB, 12 * GIB, 0.8, CELL, 16, 1024, 10_000_000, 64));
    assertThat(big.maxTotalTokens()).isLessThan(10_000_000);
    assertThat(big.warnings())
        .singleElement()
        .asString()
        .contains("max_total_tokens 10000000 does not fit");
  }

  @Test
  void derivedRequestSlotsFollowTheTokenBudget() {
    KvCacheSizing s =
        KvCacheSizing.compute(
            new KvCacheSizing.Inputs(16 * GIB, 12 * GIB, 0.8, CELL, 1, 1024, 0, 0));
    assertThat(s.maxRunningRequests()).isBetween(2048, 4096);
    KvCacheSizing tiny =
        KvCacheSizing.compute(new KvCacheSizing.Inputs(GIB, GIB, 1.0, CELL * 100, 1, 1024, 0, 0));
    assertThat(tiny.maxRunningRequests()).isLessThanOrEqualTo(tiny.maxTotalTokens());
  }

  @Test
  void tooLittleMemoryIsAClearErrorWithTheNumbers() {
    assertThatThrownBy(
            () ->
                KvCacheSizing.compute(
                    new KvCacheSizing.Inputs(16 * GIB, 2 * GIB, 0.8, CELL, 16, 1024, 0, 64)))
        .isInstanceOf(KvPoolSizingException.class)
        .hasMessageContaining("not enough memory for the KV cache")
        .hasMessageContaining("2147483648 bytes free of 17179869184")
        .hasMessageContaining("raise mem_fraction_static");
  }
}
