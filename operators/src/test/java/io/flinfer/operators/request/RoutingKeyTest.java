package io.flinfer.operators.request;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class RoutingKeyTest {
  private static final int[] LONG = IntStream.range(0, 100).toArray();

  @Test
  void requestsSharingATenantAndPrefixShareAKey() {
    int[] other = LONG.clone();
    other[80] = 999; // beyond the hashed prefix
    assertThat(RoutingKey.of(null, "t", LONG)).isEqualTo(RoutingKey.of(null, "t", other));
    int[] differentStart = LONG.clone();
    differentStart[3] = 999;
    assertThat(RoutingKey.of(null, "t", LONG))
        .isNotEqualTo(RoutingKey.of(null, "t", differentStart));
    assertThat(RoutingKey.of(null, "t", LONG)).isNotEqualTo(RoutingKey.of(null, "u", LONG));
  }

  @Test
  void anExplicitRoutingKeyWins() {
    assertThat(RoutingKey.of("user-7", "t", LONG)).isEqualTo("user-7");
    assertThat(RoutingKey.of("", "t", LONG)).isEqualTo(RoutingKey.of(null, "t", LONG));
  }
}
