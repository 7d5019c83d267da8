package io.flinfer.operators.engine;

import static io.flinfer.operators.engine.EngineTest.runAll;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flinfer.runtime.forward.CpuModelRunner;
import io.flinfer.runtime.forward.ForwardingModelRunner;
import io.flinfer.runtime.model.LlamaModel;
import io.flinfer.runtime.sampling.SamplingParams;
import io.flinfer.runtime.testing.SharedFiles;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Prompt log-probabilities: a prompt token scores exactly what it scored when a greedy request
 * generated it (alternatives included), whatever the batch, chunking, page size or cache holds.
 */
class PromptLogprobsTest {
  private static final int TOP = 5;
  private static LlamaModel model;

  @BeforeAll
  static void load() {
    model = SharedFiles.stories260k();
  }

  private static EngineConfig alone() {
    return EngineConfig.builder()
        .maxRunningRequests(1)
        .radixCache(false)
        .chunkedPrefillSize(0)
        .maxTotalTokens(512)
        .threads(1)
        .build();
  }

  @ParameterizedTest(name = "page size {0}, chunk {1}, mixed chunk {2}")
  @CsvSource({"1, 16, true", "4, 16, false", "16, 32, true", "1, 0, true"})
  void aPromptTokenScoresWhatItScoredWhenItWasGenerated(
      int pageSize, int chunk, boolean mixedChunk) {
    String[] texts = {
      "Once upon a time, there was a little girl named Lily. She loved to play",
      "Once upon a time, there was a little girl named Lily. She had a dog",
      "Tom and his dog went to the park.",
      "Ben"
    };
    int generated = 24;
    List<int[]> prompts = new ArrayList<>();
    List<List<TokenEvent>> made = new ArrayList<>();
    for (int i = 0; i < texts.length; i++) {
      int[] p = model.tokenizer().encode(texts[i], true);
      try (Engine e = new Engine(model, alone(), CpuModelRunner::new)) {
        Req r =
            Req.builder("g" + i, p)
                .params(SamplingParams.builder().topLogprobs(TOP).build())
                .maxNewTokens(generated)
                .ignoreEos(true)
                .build();
        made.add(runAll(e, List.of(r)).get("g" + i));
      }
      prompts.add(p);
    }
    EngineConfig stressed =
        EngineConfig.builder()
            .maxRunningRequests(4)
            .radixCache(true)
            .chunkedPrefillSize(chunk)
            .maxPrefillTokens(64)
            .maxTotalTokens(256)
            .pageSize(pageSize)
            .mixedChunk(mixedChunk)
            .threads(2)
            .build();
    try (Engine e = new Engine(model, stressed, CpuModelRunner::new)) {
      // The same texts without prompt logprobs first: the cache holds them, and must not serve
      // the positions that are to be scored.
      List<Req> warm = new ArrayList<>();
      List<Req> scored = new ArrayList<>();
      for (int i = 0; i < texts.length; i++) {
        int[] whole = whole(prompts.get(i), made.get(i));
        warm.add(Req.builder("w" + i, whole).maxNewTokens(4).ignoreEos(true).build());
        scored.add(
            Req.builder("s" + i, whole)
                .promptLogprobs(TOP)
                .maxNewTokens(6)
                .ignoreEos(true)
                .build());
        scored.add(Req.builder("n" + i, whole).maxNewTokens(6).ignoreEos(true).build());
        // From the first generated token's position: the prompt before it may come from the cache.
        scored.add(
            Req.builder("t" + i, whole)
                .promptLogprobs(TOP)
                .promptLogprobsStart(prompts.get(i).length - 1)
                .maxNewTokens(6)
                .ignoreEos(true)
                .build());
      }
      runAll(e, warm);
      Map<String, List<TokenEvent>> out = runAll(e, scored);
      assertThat(
              java.util.stream.IntStream.range(0, texts.length)
                  .map(i -> out.get("t" + i).get(out.get("t" + i).size() - 1).cachedTokens()))
          .as("a later start lets the cache serve the prompt before it")
          .anyMatch(cached -> cached > 0);
      for (int i = 0; i < texts.length; i++) {
        int promptLen = prompts.get(i).length;
        List<TokenEvent> events = out.get("s" + i);
        PromptLogprobs pl = events.get(0).promptLogprobs();
        assertThat(pl).as("prompt logprobs on the first token").isNotNull();
        assertThat(events.subList(1, events.size()))
            .allSatisfy(t -> assertThat(t.promptLogprobs()).isNull());
        assertThat(out.get("n" + i)).allSatisfy(t -> assertThat(t.promptLogprobs()).isNull());
        assertThat(events.get(events.size() - 1).cachedTokens()).isZero();
        assertThat(pl.count()).isEqualTo(promptLen + generated - 2);
        assertThat(pl.top()).isEqualTo(TOP);
        for (int j = 0; j < generated - 1; j++) {
          TokenEvent g = made.get(i).get(j);
          int at = promptLen + j - 1; // prompt token promptLen + j is read at the position before
          assertThat(Float.floatToRawIntBits(pl.logprobs()[at]))
              .as("text %d, generated token %d", i, j)
              .isEqualTo(Float.floatToRawIntBits(g.logprob()));
          assertThat(pl.ranks()[at]).as("a greedy token is its position's first").isEqualTo(1);
          assertThat(Arrays.copyOfRange(pl.topIds(), at * TOP, (at + 1) * TOP))
              .isEqualTo(g.topIds());
          assertThat(Arrays.copyOfRange(pl.topLogprobs(), at * TOP, (at + 1) * TOP))
              .isEqualTo(g.topLogprobs());
        }
        for (int j = 0; j < promptLen + generated - 2; j++) {
          assertThat(pl.logprobs()[j]).isLessThanOrEqualTo(0f);
          // Within the alternatives, a token's rank is its place among them.
          int rank = pl.ranks()[j];
          assertThat(rank).isBetween(1, model.config().vocabSize());
          if (rank <= TOP) {
            assertThat(pl.topLogprobs()[j * TOP + rank - 1]).isEqualTo(pl.logprobs()[j]);
          } else {
            assertThat(pl.topLogprobs()[j * TOP + TOP - 1]).isGreaterThan(pl.logprobs()[j]);
          }
          assertThat(pl.topLogprobs()[j * TOP]).isGreaterThanOrEqualTo(pl.logprobs()[j]);
        }
        PromptLogprobs tail = out.get("t" + i).get(0).promptLogprobs();
        assertThat(tail.start()).isEqualTo(promptLen - 1);
        assertThat(tail.logprobs())
            .isEqualTo(Arrays.copyOfRange(pl.logprobs(), promptLen - 1, pl.count()));
        assertThat(tail.topIds())
            .isEqualTo(Arrays.copyOfRange(pl.topIds(), (promptLen - 1) * TOP, pl.count() * TOP));
        // The request's own output is what it is without them.
        assertThat(events)
            .extracting(TokenEvent::tokenId)
            .containsExactlyElementsOf(out.get("n" + i).stream().map(TokenEvent::tokenId).toList());
      }
      EngineTest.assertNoLeak(e);
    }
  }

  @Test
  void aOneTokenPromptHasNoneAndARestoredRequestSentItsAlready() {
    try (Engine e = new Engine(model, alone(), CpuModelRunner::new)) {
      Req one = Req.builder("one", new int[] {1}).promptLogprobs(0).maxNewTokens(2).build();
      assertThat(runAll(e, List.of(one)).get("one").get(0).promptLogprobs().count()).isZero();
      int[] prompt = model.tokenizer().encode("The sun was hot.", true);
      Req restored =
          Req.builder("restored", prompt)
              .promptLogprobs(2)
              .generated(5, 6)
              .maxNewTokens(4)
              .ignoreEos(true)
              .build();
      assertThat(runAll(e, List.of(restored)).get("restored"))
          .hasSize(2)
          .allSatisfy(t -> assertThat(t.promptLogprobs()).isNull());
    }
  }

  @Test
  void aBackendThatCannotScorePositionsEndsTheRequestWithAClearReason() {
    try (Engine e =
        new Engine(
            model,
            alone(),
            (m, pool, threads) ->
                new ForwardingModelRunner(new CpuModelRunner(m, pool, threads)) {
                  @Override
                  public boolean scoresPositions() {
                    return false;
                  }
                })) {
      Req r = Req.builder("r", new int[] {1, 2, 3}).promptLogprobs(1).build();
      TokenEvent end = runAll(e, List.of(r)).get("r").get(0);
      assertThat(end.finish().type()).isEqualTo(FinishReason.Type.ERROR);
      assertThat(end.finish().detail()).contains("prompt logprobs");
    }
    assertThatThrownBy(() -> Req.builder("r", new int[] {1}).promptLogprobs(21).build())
        .hasMessageContaining("prompt_logprobs");
  }

  private static int[] whole(int[] prompt, List<TokenEvent> made) {
    int[] w = Arrays.copyOf(prompt, prompt.length + made.size() - 1);
    for (int j = 0; j < made.size() - 1; j++) {
      w[prompt.length + j] = made.get(j).tokenId();
    }
    return w;
  }
}
