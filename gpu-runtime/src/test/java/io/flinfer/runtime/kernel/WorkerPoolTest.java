package io.flinfer.runtime.kernel;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Every part of every dispatch runs exactly once, on a worker or on the caller that takes over a
 * part its worker has not started, whether workers spin, park or lag a dispatch behind.
 */
class WorkerPoolTest {

  @ParameterizedTest(name = "{0} threads")
  @ValueSource(ints = {2, 3})
  void everyPartRunsExactlyOncePerDispatch(int threads) {
    assertTimeoutPreemptively(
        Duration.ofSeconds(60),
        () -> {
          try (WorkerPool pool = new WorkerPool(threads)) {
            AtomicIntegerArray runs = new AtomicIntegerArray(threads);
            ThreadLocalRandom rnd = ThreadLocalRandom.current();
            for (int dispatch = 1; dispatch <= 50_000; dispatch++) {
              boolean slow = rnd.nextInt(16) == 0;
              pool.run(
                  (part, parts) -> {
                    assertThat(parts).isEqualTo(threads);
                    runs.incrementAndGet(part);
                    if (slow) {
                      LockSupport.parkNanos(20_000);
                    }
                  });
              for (int p = 0; p < threads; p++) {
                assertThat(runs.get(p))
                    .as("part %d after dispatch %d", p, dispatch)
                    .isEqualTo(dispatch);
              }
              if (rnd.nextInt(2_000) == 0) {
                // Long enough for the workers to park.
                LockSupport.parkNanos(1_000_000);
              }
            }
          }
        });
  }

  @ParameterizedTest(name = "{0} threads")
  @ValueSource(ints = {2, 3})
  void aFailingPartFailsTheDispatchAndThePoolGoesOn(int threads) {
    try (WorkerPool pool = new WorkerPool(threads)) {
      assertThatThrownBy(
              () ->
                  pool.run(
                      (part, parts) -> {
                        if (part == parts - 1) {
                          throw new IllegalStateException("part failed");
                        }
                      }))
          .hasMessage("part failed");
      AtomicIntegerArray runs = new AtomicIntegerArray(threads);
      pool.run((part, parts) -> runs.incrementAndGet(part));
      for (int p = 0; p < threads; p++) {
        assertThat(runs.get(p)).isEqualTo(1);
      }
    }
  }
}
