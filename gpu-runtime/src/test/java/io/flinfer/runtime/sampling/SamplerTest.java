package io.flinfer.runtime.sampling;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flinfer.runtime.forward.ForwardBatch;
import io.flinfer.runtime.forward.Logits;
import java.util.HashSet;
import java.util.Set;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;
import org.junit.jupiter.api.Test;

class SamplerTest {
  private static final int V = 10;
  private static final float[] LOGITS = {1f, 3f, 2f, 0.5f, 2.9f, -1f, 0f, 2.95f, 1.5f, -3f};

  @Test
  void greedyPicksTheArgmaxAndReportsItsLogProbability() {
    Sampler s = new Sampler(V);
    int t = s.sample(LOGITS, 0, SamplingParams.GREEDY, new int[0], 0, 0, 0, null);
    assertThat(t).isEqualTo(1);
    double z = 0;
    for (float l : LOGITS) {
      z += Math.exp(l);
    }
    assertThat((double) s.lastLogprob())
        .isCloseTo(3 - Math.log(z), org.assertj.core.data.Offset.offset(1e-5));
  }

  /**
   * A token scored in a row (a prompt log-probability) gets the bits it gets when a greedy request
   * samples it there, alternatives included, and scoring leaves the row as it was.
   */
  @Property(tries = 300)
  void scoringATokenReadsWhatGreedySamplingReportsForIt(
      @ForAll("rows") float[] row, @ForAll @IntRange(min = 0, max = 20) int k) {
    Sampler sampler = new Sampler(row.length);
    float[] copy = row.clone();
    SamplingParams p = SamplingParams.builder().topLogprobs(k).build();
    int token = sampler.sample(row, 0, p, new int[0], 0, 0, 0, null);
    float logprob = sampler.lastLogprob();
    int n = sampler.lastTopCount();
    int[] ids = new int[n];
    float[] tops = new float[n];
    for (int i = 0; i < n; i++) {
      ids[i] = sampler.lastTopId(i);
      tops[i] = sampler.lastTopLogprob(i);
    }
    float[] shifted = new float[row.length + 3];
    System.arraycopy(row, 0, shifted, 3, row.length);
    assertThat(sampler.score(shifted, 3, token, k)).isEqualTo(logprob);
    assertThat(sampler.lastRank()).isEqualTo(1);
    int other = row.length - 1;
    sampler.score(row, 0, other, 0);
    long above = 0;
    for (float v : row) {
      above += v > row[other] ? 1 : 0;
    }
    assertThat(sampler.lastRank()).isEqualTo(above + 1);
    sampler.score(shifted, 3, token, k);
    assertThat(sampler.lastTopCount()).isEqualTo(n);
    for (int i = 0; i < n; i++) {
      assertThat(sampler.lastTopId(i)).isEqualTo(ids[i]);
      assertThat(sampler.lastTopLogprob(i)).isEqualTo(tops[i]);
    }
    assertThat(row).isEqualTo(copy);
  }

  @Test
  void aStepAsksForTheGreedyChoiceADrawOrTheFullRow() {
    ForwardBatch b = new ForwardBatch();
    int[] ids = {7};
    int[] locs = {1};
    SamplingParams sampled =
        SamplingParams.builder().temperature(0.7f).topK(40).topP(0.9f).minP(0.05f).seed(3).build();
    Sampler.prepare(b.add(0, 0, ids, 0, 1, locs, 0), SamplingParams.GREEDY, 0);
    Sampler.prepare(b.add(1, 0, ids, 0, 1, locs, 0), sampled, 5);
    Sampler.prepare(
        b.add(2, 0, ids, 0, 1, locs, 0), sampled.toBuilder().repetitionPenalty(1.2f).build(), 5);
    assertThat(b.isGreedyOnly(0)).isTrue();
    assertThat(b.isDrawnOnBackend(0)).isFalse();
    assertThat(b.isGreedyOnly(1)).isFalse();
    assertThat(b.isDrawnOnBackend(1)).isTrue();
    assertThat(b.drawTemperature(1)).isEqualTo(0.7f);
    assertThat(b.drawTopK(1)).isEqualTo(40);
    assertThat(b.drawTopP(1)).isEqualTo(0.9f);
    assertThat(b.drawMinP(1)).isEqualTo(0.05f);
    assertThat(b.drawU(1)).isEqualTo(CounterRng.uniform(3, 5));
    // Penalties read the history: the row comes back and the host draws.
    assertThat(b.isGreedyOnly(2)).isFalse();
    assertThat(b.isDrawnOnBackend(2)).isFalse();
    // Alternatives are read from the row too, even for a greedy request.
    Sampler.prepare(
        b.add(3, 0, ids, 0, 1, locs, 0), SamplingParams.builder().topLogprobs(2).build(), 5);
    assertThat(b.isGreedyOnly(3)).isFalse();
    assertThat(b.isDrawnOnBackend(3)).isFalse();
    // A draw outside what the kernel was written for is refused where it is asked for.
    assertThatThrownBy(() -> b.drawOnBackend(0f, 0, 1f, 0f, 0.5f))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> b.drawOnBackend(1f, 0, 1f, 0f, 1f))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void aTokenTheBackendDrewIsTakenWithItsLogProbability() {
    Logits logits = new Logits(V);
    logits.reset(1);
    logits.setGreedy(0, 1, 3f, 4f);
    logits.setDrawn(0, 7, -1.25f);
    Sampler s = new Sampler(V);
    SamplingParams p = SamplingParams.builder().temperature(1f).seed(9).build();
    assertThat(s.sample(logits, 0, p, new int[1], 1, 1, 0, null)).isEqualTo(7);
    assertThat(s.lastLogprob()).isEqualTo(-1.25f);
    logits.reset(1);
    assertThat(logits.isDrawn(0)).isFalse();
  }

  @Test
  void theSameSeedAndIndexGiveTheSameTokenWhateverCameBefore() {
    SamplingParams p = SamplingParams.builder().temperature(1f).seed(1234).build();
    Sampler a = new Sampler(V);
    Sampler b = new Sampler(V);
    for (int i = 0; i < 50; i++) {
      b.sample(LOGITS, 0, p, new int[0], 0, 0, 999 - i, null); // unrelated draws in between
      assertThat(b.sample(LOGITS, 0, p, new int[0], 0, 0, i, null))
          .isEqualTo(a.sample(LOGITS, 0, p, new int[0], 0, 0, i, null));
    }
  }

  @Test
  void topKAndTopPAndMinPRestrictTheCandidates() {
    Set<Integer> seen = new HashSet<>();
    Sampler s = new Sampler(V);
    SamplingParams topK = SamplingParams.builder().temperature(5f).topK(3).seed(1).build();
    for (int i = 0; i < 500; i++) {
      seen.add(s.sample(LOGITS, 0, topK, new int[0], 0, 0, i, null));
    }
    assertThat(seen).containsExactlyInAnyOrder(1, 7, 4);

    seen.clear();
    SamplingParams minP = SamplingParams.builder().temperature(1f).minP(0.5f).seed(2).build();
    for (int i = 0; i < 500; i++) {
      seen.add(s.sample(LOGITS, 0, minP, new int[0], 0, 0, i, null));
    }
    // exp(l - 3) >= 0.5 keeps logits >= 3 - ln 2 = 2.307.
    assertThat(seen).containsExactlyInAnyOrder(1, 7, 4);

    seen.clear();
    SamplingParams topP = SamplingParams.builder().temperature(1f).topP(0.05f).seed(3).build();
    for (int i = 0; i < 200; i++) {
      seen.add(s.sample(LOGITS, 0, topP, new int[0], 0, 0, i, null));
    }
    assertThat(seen).containsExactly(1);
  }

  @Test
  void unrestrictedSamplingFollowsTheDistribution() {
    Sampler s = new Sampler(V);
    SamplingParams p = SamplingParams.builder().temperature(1f).seed(9).build();
    int[] counts = new int[V];
    int n = 20000;
    for (int i = 0; i < n; i++) {
      counts[s.sample(LOGITS, 0, p, new int[0], 0, 0, i, null)]++;
    }
    double z = 0;
    for (float l : LOGITS) {
      z += Math.exp(l);
    }
    for (int i = 0; i < V; i++) {
      assertThat(counts[i] / (double) n)
          .isCloseTo(Math.exp(LOGITS[i]) / z, org.assertj.core.data.Offset.offset(0.015));
    }
  }

  @Test
  void penaltiesLowerRepeatedTokens() {
    Sampler s = new Sampler(V);
    int[] history = {0, 1, 1, 1};
    SamplingParams rep = SamplingParams.builder().repetitionPenalty(2f).build();
    // Token 1 (3.0) becomes 1.5, token 7 (2.95) wins.
    assertThat(s.sample(LOGITS, 0, rep, history, 1, 4, 0, null)).isEqualTo(7);
    SamplingParams freq = SamplingParams.builder().frequencyPenalty(0.1f).build();
    // 3.0 - 3 x 0.1 = 2.7 < 2.95.
    assertThat(s.sample(LOGITS, 0, freq, history, 1, 4, 0, null)).isEqualTo(7);
    SamplingParams presence = SamplingParams.builder().presencePenalty(0.01f).build();
    assertThat(s.sample(LOGITS, 0, presence, history, 1, 4, 0, null)).isEqualTo(1);
    // Prompt tokens get no frequency or presence penalty.
    assertThat(s.sample(LOGITS, 0, freq, new int[] {1, 1, 1}, 3, 3, 0, null)).isEqualTo(1);
  }

  @Test
  void invalidParametersAreRejectedWithTheirName() {
    assertThatThrownBy(() -> SamplingParams.builder().temperature(-1).build())
        .hasMessageContaining("temperature");
    assertThatThrownBy(() -> SamplingParams.builder().topP(0).build())
        .hasMessageContaining("top_p");
    assertThatThrownBy(() -> SamplingParams.builder().topK(-2).build())
        .hasMessageContaining("top_k");
    assertThatThrownBy(() -> SamplingParams.builder().minP(2).build())
        .hasMessageContaining("min_p");
    assertThatThrownBy(() -> SamplingParams.builder().repetitionPenalty(0).build())
        .hasMessageContaining("repetition_penalty");
  }

  /**
   * The reported log-probability is that of the token under the distribution after penalties and
   * before temperature and truncation, whatever the temperature, top-k or top-p: before the fix it
   * was read from the tempered, truncated probabilities (a greedy -0.03 became -16.8 at a
   * temperature of 1e-6).
   */
  @Test
  void theLogProbabilityOfATokenIsTheSameAtEveryTemperatureAndTruncation() {
    float[] logits = LOGITS.clone();
    logits[4] = 40f; // so every setting picks token 4
    double z = 0;
    for (float l : logits) {
      z += Math.exp(l - 40.0);
    }
    float expected = (float) (-Math.log(z));
    Sampler s = new Sampler(V);
    for (float temperature : new float[] {0f, 1e-6f, 0.5f, 1f, 2f}) {
      for (int topK : new int[] {0, 1, 3}) {
        for (float topP : new float[] {1f, 0.9f, 0.1f}) {
          SamplingParams p =
              SamplingParams.builder()
                  .temperature(temperature)
                  .topK(topK)
                  .topP(topP)
                  .seed(7)
                  .build();
          assertThat(s.sample(logits, 0, p, new int[0], 0, 0, 3, null)).isEqualTo(4);
          assertThat(s.lastLogprob())
              .as("temperature %s, top-k %d, top-p %s", temperature, topK, topP)
              .isCloseTo(expected, org.assertj.core.data.Offset.offset(1e-6f));
        }
      }
    }
    // With a penalty the distribution is the penalized one: token 4 seen once, divided by 2.
    SamplingParams penalized =
        SamplingParams.builder().temperature(0.7f).repetitionPenalty(2f).seed(7).build();
    float[] after = logits.clone();
    after[4] = 20f;
    double zp = 0;
    for (float l : after) {
      zp += Math.exp(l - 20.0);
    }
    assertThat(s.sample(logits, 0, penalized, new int[] {4}, 1, 1, 0, null)).isEqualTo(4);
    assertThat(s.lastLogprob())
        .isCloseTo((float) -Math.log(zp), org.assertj.core.data.Offset.offset(1e-6f));
  }

  @Property(tries = 300)
  void theAlternativesAreTheMostLikelyTokensInOrderAndLeaveTheChoiceAlone(
      @ForAll("rows") float[] logits,
      @ForAll @IntRange(min = 1, max = SamplingParams.MAX_TOP_LOGPROBS) int k,
      @ForAll boolean greedy,
      @ForAll @LongRange(min = 0, max = 1000) long seed) {
    int v = logits.length;
    SamplingParams plain =
        SamplingParams.builder().temperature(greedy ? 0f : 0.8f).topP(0.9f).seed(seed).build();
    Sampler s = new Sampler(v);
    int chosen = s.sample(logits, 0, plain, new int[0], 0, 0, 3, null);
    assertThat(s.lastTopCount()).isZero();
    int withTop =
        s.sample(logits, 0, plain.toBuilder().topLogprobs(k).build(), new int[0], 0, 0, 3, null);
    assertThat(withTop).isEqualTo(chosen);
    // The reference: every token by logit, larger first, ties by id; log-probabilities in doubles.
    Integer[] order = new Integer[v];
    double max = Double.NEGATIVE_INFINITY;
    for (int i = 0; i < v; i++) {
      order[i] = i;
      max = Math.max(max, logits[i]);
    }
    java.util.Arrays.sort(
        order, (a, b) -> logits[a] != logits[b] ? Float.compare(logits[b], logits[a]) : a - b);
    double z = 0;
    for (float l : logits) {
      z += Math.exp(l - max);
    }
    double logZ = max + Math.log(z);
    int n = Math.min(k, v);
    assertThat(s.lastTopCount()).isEqualTo(n);
    for (int i = 0; i < n; i++) {
      assertThat(s.lastTopId(i)).as("alternative %d", i).isEqualTo(order[i]);
      assertThat((double) s.lastTopLogprob(i))
          .isCloseTo(logits[order[i]] - logZ, org.assertj.core.data.Offset.offset(1e-4));
      if (s.lastTopId(i) == chosen) {
        assertThat(s.lastTopLogprob(i)).isEqualTo(s.lastLogprob());
      }
    }
  }

  /**
   * A mask leaves only its tokens: whatever the truncation, the chosen token and every alternative
   * are allowed ones, and log-probabilities are those of the distribution over the allowed tokens
   * alone.
   */
  @Property(tries = 300)
  void aMaskLeavesOnlyItsTokens(
      @ForAll("rows") float[] logits,
      @ForAll long maskBits,
      @ForAll @IntRange(min = 0, max = 3) int mode,
      @ForAll @LongRange(min = 0, max = 1000) long seed) {
    int v = logits.length;
    long[] allowed = new long[(v + 63) / 64];
    for (int i = 0; i < v; i++) {
      if ((maskBits >>> (i % 64) & 1) != 0 || i == (int) (seed % v)) {
        allowed[i >>> 6] |= 1L << i;
      }
    }
    SamplingParams.Builder b = SamplingParams.builder().seed(seed).topLogprobs(5);
    switch (mode) {
      case 1 -> b.temperature(1f);
      case 2 -> b.temperature(0.7f).topP(0.8f).topK(3);
      case 3 -> b.temperature(1.3f).minP(0.2f);
      default -> {}
    }
    Sampler s = new Sampler(v);
    int t = s.sample(logits, 0, b.build(), new int[0], 0, 0, seed, allowed);
    assertThat(allowed[t >>> 6] & 1L << t).isNotZero();
    double max = Double.NEGATIVE_INFINITY;
    for (int i = 0; i < v; i++) {
      if ((allowed[i >>> 6] & 1L << i) != 0) {
        max = Math.max(max, logits[i]);
      }
    }
    double z = 0;
    for (int i = 0; i < v; i++) {
      if ((allowed[i >>> 6] & 1L << i) != 0) {
        z += Math.exp(logits[i] - max);
      }
    }
    double logZ = max + Math.log(z);
    assertThat((double) s.lastLogprob())
        .isCloseTo(logits[t] - logZ, org.assertj.core.data.Offset.offset(1e-4));
    for (int i = 0; i < s.lastTopCount(); i++) {
      int id = s.lastTopId(i);
      assertThat(allowed[id >>> 6] & 1L << id).isNotZero();
    }
  }

  @Test
  void logitBiasesMoveTheChoiceAndTheLogProbability() {
    float[] logits = {1f, 3f, 2f, 0f};
    Sampler s = new Sampler(4);
    SamplingParams banTop =
        SamplingParams.builder().logitBias(new int[] {1}, new float[] {-100f}).build();
    assertThat(s.sample(logits, 0, banTop, new int[0], 0, 0, 0, null)).isEqualTo(2);
    double z = Math.exp(1) + Math.exp(3 - 100) + Math.exp(2) + Math.exp(0);
    assertThat((double) s.lastLogprob())
        .isCloseTo(2 - Math.log(z), org.assertj.core.data.Offset.offset(1e-5));
    SamplingParams forced =
        SamplingParams.builder()
            .temperature(1f)
            .seed(3)
            .logitBias(new int[] {3, 0}, new float[] {100f, -5f})
            .build();
    for (int i = 0; i < 50; i++) {
      assertThat(s.sample(logits, 0, forced, new int[0], 0, 0, i, null)).isEqualTo(3);
    }
    assertThatThrownBy(
            () -> SamplingParams.builder().logitBias(new int[] {2, 2}, new float[] {1, 1}).build())
        .hasMessageContaining("distinct");
  }

  @Provide
  Arbitrary<float[]> rows() {
    // Few distinct values, so that ties are common.
    return Arbitraries.floats()
        .between(-4f, 4f)
        .map(f -> Math.round(f * 4) / 4f)
        .array(float[].class)
        .ofMinSize(1)
        .ofMaxSize(64);
  }
}
