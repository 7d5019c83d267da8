package io.flinfer.job.cli;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Which commands run inside Flink's client (`flink run`) and so must not relaunch or exit. */
class FlinferCommandTest {
  @Test
  void onlyTheJobCommandSubmitsToACluster() {
    assertThat(
            FlinferCommand.submitsToCluster(new String[] {"job", "--bootstrap-servers", "k:9092"}))
        .isTrue();
    assertThat(FlinferCommand.submitsToCluster(new String[] {"run", "--once"})).isFalse();
    assertThat(FlinferCommand.submitsToCluster(new String[] {"bench-engine"})).isFalse();
    assertThat(FlinferCommand.submitsToCluster(new String[0])).isFalse();
  }
}
