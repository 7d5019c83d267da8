package io.flinfer.operators.flink;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.apache.flink.api.common.externalresource.ExternalResourceInfo;
import org.junit.jupiter.api.Test;

/** A subtask runs on the GPU its slot was assigned, unless a backend is configured. */
class SlotBackendTest {
  /** What Flink's GPU driver reports for an assigned GPU: its {@code index}. */
  private record Gpu(Map<String, String> properties) implements ExternalResourceInfo {
    @Override
    public Optional<String> getProperty(String key) {
      return Optional.ofNullable(properties.get(key));
    }

    @Override
    public Collection<String> getKeys() {
      return properties.keySet();
    }
  }

  @Test
  void autoTakesTheGpuAssignedToTheSlot() {
    assertThat(SlotBackend.choose("auto", Set.of(new Gpu(Map.of("index", "3")))))
        .isEqualTo("cuda:3");
  }

  @Test
  void autoWithoutAnAssignedGpuDecidesOnTheMachine() {
    assertThat(SlotBackend.choose("auto", List.of())).isEqualTo("auto");
    assertThat(SlotBackend.choose("auto", List.of(new Gpu(Map.of("uuid", "GPU-1")))))
        .isEqualTo("auto");
  }

  @Test
  void aConfiguredBackendWins() {
    assertThat(SlotBackend.choose("cpu", Set.of(new Gpu(Map.of("index", "0"))))).isEqualTo("cpu");
    assertThat(SlotBackend.choose("cuda:1", List.of())).isEqualTo("cuda:1");
  }
}
