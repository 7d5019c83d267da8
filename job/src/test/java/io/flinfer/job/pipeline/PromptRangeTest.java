package io.flinfer.job.pipeline;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** How the ends of a replay's range are written on the command line, and what is refused. */
class PromptRangeTest {
  @Test
  void eachEndIsEarliestOrLatestATimeOrPartitionOffsets() {
    assertThat(PromptRange.parse("p", "earliest", "latest")).hasToString("[earliest, latest)");
    assertThat(PromptRange.parse("p", "2026-11-22T08:00:00Z", "1795334400000")).isNotNull();
    assertThat(PromptRange.parse("p", "0:10,1:12", "0:20,1:30")).isNotNull();
  }

  @Test
  void aRangeThatCannotBeReadIsRefusedWithItsReason() {
    assertThatThrownBy(() -> PromptRange.parse("p", "latest", "latest"))
        .hasMessageContaining("starts at earliest");
    assertThatThrownBy(() -> PromptRange.parse("p", "earliest", "earliest"))
        .hasMessageContaining("stops at latest");
    assertThatThrownBy(() -> PromptRange.parse("p", "2026-11-22T09:00:00Z", "2026-11-22T08:00:00Z"))
        .hasMessageContaining("starts after it ends");
    assertThatThrownBy(() -> PromptRange.parse("p", "2026-11-22 08:00", "latest"))
        .hasMessageContaining("partition:offset");
    assertThatThrownBy(() -> PromptRange.parse("p", "2026-11-22Tnoon", "latest"))
        .hasMessageContaining("ISO-8601");
    assertThatThrownBy(() -> PromptRange.parse("p", "0:1,0:2", "latest"))
        .hasMessageContaining("named twice");
    assertThatThrownBy(() -> PromptRange.parse("p", "0:5,1:2", "0:9,1:1"))
        .hasMessageContaining("partition 1 starts after it stops: 2 > 1");
  }
}
