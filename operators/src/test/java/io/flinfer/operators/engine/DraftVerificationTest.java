package io.flinfer.operators.engine;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class DraftVerificationTest {

  /** Verifies a draft of {@code drafted} tokens of which the first {@code accepted} hold. */
  private static void verify(DraftVerification v, int drafted, int accepted) {
    v.start(drafted);
    for (int i = 0; i < drafted && v.wants(i); i++) {
      v.record(i < accepted ? 7 : 8, 7, -0.5f, TokenEvent.NO_IDS, TokenEvent.NO_LOGPROBS);
    }
    v.adapt();
  }

  @Test
  void acceptedTokensAndTheRefusedOneAreWhatWasSampled() {
    DraftVerification v = new DraftVerification(4);
    v.start(4);
    v.record(7, 7, -0.1f, TokenEvent.NO_IDS, TokenEvent.NO_LOGPROBS);
    assertThat(v.wants(1)).isTrue();
    assertThat(v.wants(2)).as("rows come in order").isFalse();
    v.record(9, 8, -0.2f, TokenEvent.NO_IDS, TokenEvent.NO_LOGPROBS);
    assertThat(v.wants(2)).as("nothing after a refusal").isFalse();
    assertThat(v.sampled()).isEqualTo(2);
    assertThat(v.allAccepted()).isFalse();
    assertThat(v.token(1)).isEqualTo(9);
    assertThat(v.logprob(1)).isEqualTo(-0.2f);
  }

  @Test
  void draftsGrowWhileWholeDraftsHoldAndPauseLongerAfterEachRefusal() {
    DraftVerification v = new DraftVerification(2);
    assertThat(v.allowance(8)).isEqualTo(2);
    verify(v, 2, 2);
    assertThat(v.allowance(8)).as("doubled").isEqualTo(4);
    verify(v, 4, 4);
    assertThat(v.allowance(8)).isEqualTo(8);
    assertThat(v.allowance(5)).as("never past the step's maximum").isEqualTo(5);
    verify(v, 8, 3);
    assertThat(v.allowance(8)).as("one past what held").isEqualTo(4);
    verify(v, 4, 0);
    assertThat(v.allowance(8)).as("paused one step").isZero();
    assertThat(v.allowance(8)).isEqualTo(1);
    verify(v, 1, 0);
    assertThat(v.allowance(8)).isZero();
    assertThat(v.allowance(8)).as("paused two steps").isZero();
    assertThat(v.allowance(8)).isEqualTo(1);
    for (int i = 0; i < 6; i++) {
      verify(v, 1, 0);
      int paused = 0;
      while (v.allowance(8) == 0) {
        paused++;
      }
      assertThat(paused).isEqualTo(Math.min(DraftVerification.MAX_PAUSE, 4 << i));
    }
    verify(v, 1, 1);
    assertThat(v.allowance(8)).as("a whole draft ends the pauses").isEqualTo(2);
    verify(v, 2, 0);
    assertThat(v.allowance(8)).as("and starts them over").isZero();
    assertThat(v.allowance(8)).isEqualTo(1);
  }
}
