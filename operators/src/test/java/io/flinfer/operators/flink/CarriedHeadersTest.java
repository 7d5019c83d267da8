package io.flinfer.operators.flink;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class CarriedHeadersTest {
  @Test
  void theCarriedEntriesOfMetadataComeInTheNamesOrder() {
    CarriedHeaders h = CarriedHeaders.of(List.of("x-correlation-id", "traceparent"));
    assertThat(h.of(Map.of("traceparent", "t", "a", "b", "x-correlation-id", "c")))
        .containsExactly(Map.entry("x-correlation-id", "c"), Map.entry("traceparent", "t"));
    assertThat(CarriedHeaders.none().of(Map.of("traceparent", "t"))).isEmpty();
    assertThat(CarriedHeaders.of(List.of())).isSameAs(CarriedHeaders.none());
  }

  @Test
  void namesAreFewDistinctAndPlain() {
    assertThatThrownBy(() -> CarriedHeaders.of(List.of("a", "a")))
        .hasMessageContaining("repeat a name");
    assertThatThrownBy(() -> CarriedHeaders.of(List.of("a b")))
        .hasMessageContaining("letters, digits, dots, underscores or dashes: 'a b'");
    assertThatThrownBy(() -> CarriedHeaders.of(List.of(""))).hasMessageContaining("1-64");
    assertThatThrownBy(() -> CarriedHeaders.of(Collections.nCopies(17, "a")))
        .hasMessageContaining("at most 16");
  }
}
