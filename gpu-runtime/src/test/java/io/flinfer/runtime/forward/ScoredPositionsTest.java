package io.flinfer.runtime.forward;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flinfer.memcache.ReqToTokenPool;
import io.flinfer.runtime.model.LlamaModel;
import io.flinfer.runtime.testing.ForwardRuns;
import io.flinfer.runtime.testing.SharedFiles;
import io.flinfer.runtime.testing.ZooGoldens;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The logits a step hands out at scored positions (prompt log-probabilities) are the bits each
 * position gets as a request's last token, decoded one token at a time, whatever else is in the
 * batch and however the prompt is chunked.
 */
class ScoredPositionsTest {

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"stories260K", "llama-q-Q8_0", "llama3-tiny"})
  void scoredRowsAreTheRowsEachPositionGetsAsTheLastToken(String name) {
    LlamaModel model =
        name.equals("stories260K") ? SharedFiles.stories260k() : ZooGoldens.model(name);
    int vocab = model.config().vocabSize();
    Random rnd = new Random(7);
    int[] tokens = rnd.ints(150, 3, vocab).toArray();
    int[] other = rnd.ints(40, 3, vocab).toArray();
    // One token of prompt, then a decode step per token: the row at every position.
    List<float[]> oneByOne = ForwardRuns.alone(model, tokens, 1, CpuModelRunner::new, 1);
    // Chunks of 5 score few enough positions for one classifier product with the last rows; the
    // longer ones (on the large vocabularies) need products of their own.
    for (int chunk : new int[] {tokens.length, 37, 5}) {
      List<float[]> rows = new ArrayList<>();
      ReqToTokenPool reqToToken = new ReqToTokenPool(2, 512);
      int[] slots = new int[tokens.length];
      int[] otherSlots = new int[other.length];
      for (int i = 0; i < slots.length; i++) {
        slots[i] = 1 + 2 * i;
      }
      for (int i = 0; i < otherSlots.length; i++) {
        otherSlots[i] = 2 + 2 * i;
      }
      reqToToken.write(0, 0, otherSlots);
      reqToToken.write(1, 0, slots);
      try (ModelRunner runner =
          ((ModelRunnerFactory) CpuModelRunner::new).createWithKv(model, reqToToken, 2, 1024)) {
        assertThat(runner.scoresPositions()).isTrue();
        ForwardBatch batch = new ForwardBatch();
        Logits logits = new Logits(vocab);
        int[] stepStart = {0};
        batch.positionSink(
            (r, i, row, off) -> {
              assertThat(r).isEqualTo(1);
              assertThat(i).isEqualTo(rows.size() - stepStart[0]);
              rows.add(Arrays.copyOfRange(row, off, off + vocab));
            });
        for (int pos = 0; pos < tokens.length; pos += chunk) {
          int len = Math.min(chunk, tokens.length - pos);
          batch.reset().add(0, 0, other, 0, other.length, otherSlots, 0);
          batch.add(1, pos, tokens, pos, len, slots, pos).scorePositions(0);
          stepStart[0] = rows.size();
          runner.forward(batch, logits);
          assertThat(rows.size() - stepStart[0]).isEqualTo(len - 1);
          rows.add(logits.row(1));
        }
      }
      assertThat(rows).hasSameSizeAs(oneByOne);
      for (int p = 0; p < rows.size(); p++) {
        assertThat(bits(rows.get(p)))
            .as("%s, chunk %d, position %d", name, chunk, p)
            .isEqualTo(bits(oneByOne.get(p)));
      }
    }
  }

  @Test
  void scoringFromALaterTokenHandsOnlyThoseRows() {
    LlamaModel model = SharedFiles.stories260k();
    int vocab = model.config().vocabSize();
    int[] tokens = new Random(3).ints(40, 3, vocab).toArray();
    List<float[]> oneByOne = ForwardRuns.alone(model, tokens, 1, CpuModelRunner::new, 1);
    ReqToTokenPool reqToToken = new ReqToTokenPool(1, 512);
    int[] slots = new int[tokens.length];
    for (int i = 0; i < slots.length; i++) {
      slots[i] = i + 1;
    }
    reqToToken.write(0, 0, slots);
    List<Integer> seen = new ArrayList<>();
    try (ModelRunner runner =
        ((ModelRunnerFactory) CpuModelRunner::new).createWithKv(model, reqToToken, 1, 512)) {
      ForwardBatch batch = new ForwardBatch();
      batch.positionSink(
          (r, i, row, off) -> {
            seen.add(i);
            assertThat(bits(Arrays.copyOfRange(row, off, off + vocab)))
                .isEqualTo(bits(oneByOne.get(i)));
          });
      batch.add(0, 0, tokens, 0, tokens.length, slots, 0).scorePositions(25);
      assertThat(batch.firstScored(0)).isEqualTo(25);
      runner.forward(batch, new Logits(vocab));
    }
    assertThat(seen)
        .containsExactlyElementsOf(
            java.util.stream.IntStream.range(25, tokens.length - 1).boxed().toList());
  }

  @Test
  void scoringNeedsASink() {
    ForwardBatch batch = new ForwardBatch();
    batch.add(0, 0, new int[] {1, 2, 3}, 0, 3, new int[] {1, 2, 3}, 0);
    assertThatThrownBy(() -> batch.scorePositions(0)).isInstanceOf(IllegalStateException.class);
  }

  private static int[] bits(float[] row) {
    int[] b = new int[row.length];
    for (int i = 0; i < row.length; i++) {
      b[i] = Float.floatToRawIntBits(row[i]);
    }
    return b;
  }
}
