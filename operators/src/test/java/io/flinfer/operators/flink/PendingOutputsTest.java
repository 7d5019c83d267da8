package io.flinfer.operators.flink;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flinfer.avro.PromptRequest;
import org.junit.jupiter.api.Test;

/**
 * When held tokens leave: the first at once, the rest at most once per interval, all at the end.
 */
class PendingOutputsTest {
  private static final int[] NO_IDS = new int[0];
  private static final float[] NO_LOGPROBS = new float[0];

  private static TokenizedPrompt prompt(String id) {
    TokenizedPrompt p = new TokenizedPrompt();
    p.request = PromptRequest.newBuilder().setRequestId(id).setPrompt("x").build();
    p.promptIds = new int[] {1};
    p.routingKey = id;
    return p;
  }

  @Test
  void theFirstTokenLeavesAtOnceAndTheRestOncePerInterval() {
    PendingOutputs out = new PendingOutputs(10);
    TokenizedPrompt a = prompt("a");
    out.add(a, 0, 100, -0.5f, NO_IDS, NO_LOGPROBS, 1_000);
    TokenOutput first = out.takeDue(1_000, false).get(0);
    assertThat(first.index).isZero();
    assertThat(first.tokenIds).containsExactly(100);
    assertThat(first.logprobs).containsExactly(-0.5f);
    assertThat(first.prompt).as("the first output announces the request").isSameAs(a);

    out.add(a, 1, 101, -1f, NO_IDS, NO_LOGPROBS, 1_003);
    out.add(a, 2, 102, -2f, NO_IDS, NO_LOGPROBS, 1_006);
    assertThat(out.takeDue(1_012, false)).as("held 9 ms of 10").isEmpty();
    out.add(a, 3, 103, -3f, NO_IDS, NO_LOGPROBS, 1_013);
    TokenOutput held = out.takeDue(1_013, false).get(0);
    assertThat(held.index).isEqualTo(1);
    assertThat(held.tokenIds).containsExactly(101, 102, 103);
    assertThat(held.logprobs).containsExactly(-1f, -2f, -3f);
    assertThat(held.prompt).isNull();
    assertThat(held.finishType).isNull();
    assertThat(out.takeDue(1_013, true)).as("nothing left held").isEmpty();
  }

  @Test
  void theEndCarriesTheHeldTokensAndABarrierTakesEverything() {
    PendingOutputs out = new PendingOutputs(60_000);
    TokenizedPrompt a = prompt("a");
    TokenizedPrompt b = prompt("b");
    out.add(a, 0, 1, 0f, NO_IDS, NO_LOGPROBS, 0);
    out.add(b, 0, 2, 0f, NO_IDS, NO_LOGPROBS, 0);
    assertThat(out.takeDue(0, false)).hasSize(2);
    out.add(a, 1, 3, 0f, NO_IDS, NO_LOGPROBS, 1);
    out.add(b, 1, 4, 0f, NO_IDS, NO_LOGPROBS, 1);
    out.add(b, 2, 5, 0f, NO_IDS, NO_LOGPROBS, 2);

    TokenOutput end = out.finish(a, "length", null, 7, 3);
    assertThat(end.index).isEqualTo(1);
    assertThat(end.tokenIds).containsExactly(3);
    assertThat(end.finishType).isEqualTo("length");
    assertThat(end.cachedTokens).isEqualTo(7);

    assertThat(out.takeDue(3, false)).isEmpty();
    TokenOutput barrier = out.takeDue(3, true).get(0);
    assertThat(barrier.requestId).isEqualTo("b");
    assertThat(barrier.tokenIds).containsExactly(4, 5);
    assertThat(out.takeDue(4, true)).isEmpty();
  }

  @Test
  void anEndWithoutTokensAndAnIntervalOfZero() {
    PendingOutputs out = new PendingOutputs(0);
    TokenizedPrompt a = prompt("a");
    TokenOutput aborted = out.finish(a, "abort", "deadline passed", 0, 0);
    assertThat(aborted.index).isEqualTo(-1);
    assertThat(aborted.tokenIds).isEmpty();
    assertThat(aborted.prompt).isSameAs(a);

    TokenizedPrompt b = prompt("b");
    out.add(b, 0, 1, 0f, NO_IDS, NO_LOGPROBS, 5);
    out.add(b, 1, 2, 0f, NO_IDS, NO_LOGPROBS, 5);
    assertThat(out.takeDue(5, false).get(0).tokenIds).containsExactly(1, 2);
    out.add(b, 2, 3, 0f, NO_IDS, NO_LOGPROBS, 5);
    assertThat(out.takeDue(5, false).get(0).tokenIds).as("no wait at all").containsExactly(3);
  }

  @Test
  void refusesAGapInATokenRunAndANegativeInterval() {
    PendingOutputs out = new PendingOutputs(10);
    TokenizedPrompt a = prompt("a");
    out.add(a, 4, 1, 0f, NO_IDS, NO_LOGPROBS, 0);
    assertThatThrownBy(() -> out.add(a, 6, 2, 0f, NO_IDS, NO_LOGPROBS, 0))
        .isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> new PendingOutputs(-1)).isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void eachTokensAlternativesLeaveWithIt() {
    PendingOutputs out = new PendingOutputs(60_000);
    TokenizedPrompt a = prompt("a");
    out.add(a, 0, 7, -0.1f, new int[] {7, 3}, new float[] {-0.1f, -2f}, 0);
    assertThat(out.takeDue(0, false).get(0).topIds).containsExactly(7, 3);
    for (int i = 1; i <= 5; i++) {
      out.add(a, i, 10 + i, -i, new int[] {10 + i, 20 + i}, new float[] {-i, -i - 1f}, 1);
    }
    TokenOutput held = out.finish(a, "length", "", 0, 2);
    assertThat(held.tokenIds).containsExactly(11, 12, 13, 14, 15);
    assertThat(held.topIds).containsExactly(11, 21, 12, 22, 13, 23, 14, 24, 15, 25);
    assertThat(held.topLogprobs).containsExactly(-1f, -2f, -2f, -3f, -3f, -4f, -4f, -5f, -5f, -6f);
    // A request that asked for none carries none.
    TokenizedPrompt b = prompt("b");
    out.add(b, 0, 1, 0f, NO_IDS, NO_LOGPROBS, 3);
    assertThat(out.takeDue(3, true).get(0).topIds).isEmpty();
  }
}
