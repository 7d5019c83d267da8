package io.flinfer.operators.flink;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinfer.avro.CompletionChunk;
import io.flinfer.operators.request.RequestLimits;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

class PromptLogprobChunksTest {

  /**
   * Chunks cover prompt tokens 1 .. n - 1 once each, in order, with their values; their indexes are
   * negative and increasing; and each fits in the largest record, key and headers included, at
   * worst-case values (the longest id, the largest token ids, the most header bytes).
   */
  @Property(tries = 300)
  void chunksCoverThePromptOnceInOrderAndFitTheLargestRecord(
      @ForAll @IntRange(min = 1, max = 1500) int promptLen,
      @ForAll @IntRange(min = 0, max = 20) int top,
      @ForAll @IntRange(min = 0, max = 8) int limitStep,
      @ForAll @IntRange(min = 8, max = 256) int idBytes) {
    int echo = 1024 * limitStep;
    RequestLimits limits =
        RequestLimits.builder()
            .maxIdBytes(idBytes)
            .deadLetterEchoBytes(echo)
            .maxRecordBytes(4 * echo + idBytes + 4096 + 1000 * limitStep)
            .build();
    String id = "x".repeat(idBytes);
    Random rnd = new Random(promptLen * 31L + top);
    int[] prompt = new int[promptLen];
    float[] logprobs = new float[promptLen - 1];
    int[] ranks = new int[promptLen - 1];
    int[] topIds = new int[(promptLen - 1) * top];
    float[] topLogprobs = new float[topIds.length];
    for (int i = 0; i < promptLen; i++) {
      prompt[i] = Integer.MAX_VALUE - rnd.nextInt(1000);
    }
    for (int i = 0; i < logprobs.length; i++) {
      logprobs[i] = -rnd.nextFloat() * 30;
      ranks[i] = Integer.MAX_VALUE - i;
    }
    for (int i = 0; i < topIds.length; i++) {
      topIds[i] = Integer.MAX_VALUE - i;
      topLogprobs[i] = -i;
    }
    int perChunk = PromptLogprobChunks.tokensPerChunk(limits);
    List<CompletionChunk> chunks =
        PromptLogprobChunks.of(id, prompt, logprobs, ranks, topIds, topLogprobs, perChunk);
    List<Integer> ids = new ArrayList<>();
    int lastIndex = Integer.MIN_VALUE;
    for (CompletionChunk c : chunks) {
      var pl = c.getPromptLogprobs();
      assertThat(c.getIndex()).isNegative().isGreaterThan(lastIndex);
      lastIndex = c.getIndex();
      assertThat(pl.getFirstPosition()).isEqualTo(ids.size() + 1);
      assertThat(c.getIndex()).isEqualTo(pl.getFirstPosition() - promptLen);
      assertThat(pl.getTokenIds()).hasSizeLessThanOrEqualTo(perChunk);
      assertThat(c.getTextDelta()).isEmpty();
      assertThat(c.getTokenIds()).isEmpty();
      for (int i = 0; i < pl.getTokenIds().size(); i++) {
        int at = ids.size();
        assertThat(pl.getLogprobs().get(i)).isEqualTo(logprobs[at]);
        assertThat(pl.getRanks().get(i)).isEqualTo(ranks[at]);
        if (top > 0) {
          assertThat(pl.getTopLogprobs().get(i).getTokenIds()).hasSize(top);
          assertThat(pl.getTopLogprobs().get(i).getTokenIds().get(0)).isEqualTo(topIds[at * top]);
        } else {
          assertThat(pl.getTopLogprobs()).isEmpty();
        }
        ids.add(pl.getTokenIds().get(i));
      }
      // Carried headers of the most bytes allowed, in the value and as the record's headers.
      String value = "v".repeat(Math.max(0, echo - 1));
      c.setHeaders(java.util.Map.of("h", value));
      int bytes;
      try {
        bytes =
            c.toByteBuffer().remaining()
                + id.getBytes(StandardCharsets.UTF_8).length
                + 1
                + value.length();
      } catch (java.io.IOException e) {
        throw new AssertionError(e);
      }
      assertThat(bytes).isLessThanOrEqualTo(limits.maxRecordBytes());
    }
    assertThat(ids).hasSize(promptLen - 1);
    for (int i = 1; i < promptLen; i++) {
      assertThat(ids.get(i - 1)).isEqualTo(prompt[i]);
    }
  }
}
