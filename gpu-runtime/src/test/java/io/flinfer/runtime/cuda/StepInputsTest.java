package io.flinfer.runtime.cuda;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinfer.runtime.forward.ForwardBatch;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** The per-step integers are packed in the layout the kernels read, in one array. */
class StepInputsTest {
  @Test
  void packsIdsPositionsSlotsRowsThenLastTokens() {
    ForwardBatch b =
        new ForwardBatch()
            .add(3, 5, new int[] {7, 8, 9}, 0, 3, new int[] {40, 41, 42}, 0)
            .add(1, 0, new int[] {11}, 0, 1, new int[] {50}, 0);
    StepInputs in = new StepInputs();
    int[] packed = Arrays.copyOf(in.pack(b), in.length());
    assertThat(packed)
        .containsExactly(
            7, 8, 9, 11, // ids
            5, 6, 7, 0, // positions
            40, 41, 42, 50, // out_cache_loc
            3, 3, 3, 1, // request-table row per token
            2, 3); // each request's last token
    assertThat(in.positionsOffset()).isEqualTo(4);
    assertThat(in.lastTokenOffset()).isEqualTo(16);
  }
}
