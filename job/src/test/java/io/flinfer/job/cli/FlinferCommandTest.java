package io.flinfer.job.cli;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Which commands run inside Flink's client (`flink run`) and so must not relaunch or exit. */
class FlinferCommandTest {
  @Test
  void onlyTheCommandsThatBuildAFlinkJobRunInFlinksClient() {
    assertThat(FlinferCommand.buildsFlinkJob(new String[] {"job", "--bootstrap-servers", "k:9092"}))
        .isTrue();
    assertThat(FlinferCommand.buildsFlinkJob(new String[] {"replay", "--bootstrap-servers", "k"}))
        .isTrue();
    assertThat(FlinferCommand.buildsFlinkJob(new String[] {"run", "--once"})).isFalse();
    assertThat(FlinferCommand.buildsFlinkJob(new String[] {"bench-engine"})).isFalse();
    assertThat(FlinferCommand.buildsFlinkJob(new String[0])).isFalse();
  }
}
