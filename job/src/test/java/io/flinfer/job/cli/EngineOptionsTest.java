package io.flinfer.job.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flinfer.memcache.KvStoreType;
import io.flinfer.operators.engine.EngineConfig;
import io.flinfer.operators.engine.SchedulePolicy;
import io.flinfer.operators.engine.SpeculativeConfig;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** Every engine setting is reachable from the command line, and a bad one is named. */
class EngineOptionsTest {
  private static EngineOptions parse(String... args) {
    EngineOptions options = new EngineOptions();
    new CommandLine(options).parseArgs(args);
    return options;
  }

  @Test
  void defaultsSizeThePoolFromMemoryWithSglangsDefaults() {
    EngineConfig c = parse().engineConfig();
    assertThat(c.maxTotalTokens()).isZero();
    assertThat(c.memFractionStatic()).isZero();
    assertThat(c.kvStoreType()).isNull();
    assertThat(c.schedulePolicy()).isEqualTo(SchedulePolicy.LPM);
    assertThat(c.radixCache()).isTrue();
    assertThat(c.mixedChunk()).isTrue();
    assertThat(c.pageSize()).isEqualTo(1);
    assertThat(c.speculative()).as("speculative decoding is asked for").isNull();
  }

  @Test
  void everyFlagReachesTheEngine() {
    EngineConfig c =
        parse(
                "--max-running-requests=7",
                "--max-total-tokens=4096",
                "--mem-fraction-static=0.3",
                "--page-size=16",
                "--kv-store-type=bf16",
                "--schedule-policy=dfs-weight",
                "--no-radix-cache",
                "--no-mixed-chunk",
                "--chunked-prefill-size=256",
                "--max-prefill-tokens=1024",
                "--engine-threads=3",
                "--speculative-num-draft-tokens=5",
                "--speculative-ngram-min-match-window-size=2",
                "--speculative-ngram-max-match-window-size=6",
                "--speculative-disable-by-batch-size=3")
            .engineConfig();
    assertThat(c.maxRunningRequests()).isEqualTo(7);
    assertThat(c.maxTotalTokens()).isEqualTo(4096);
    assertThat(c.memFractionStatic()).isEqualTo(0.3);
    assertThat(c.pageSize()).isEqualTo(16);
    assertThat(c.kvStoreType()).isEqualTo(KvStoreType.BF16);
    assertThat(c.schedulePolicy()).isEqualTo(SchedulePolicy.DFS_WEIGHT);
    assertThat(c.radixCache()).isFalse();
    assertThat(c.mixedChunk()).isFalse();
    assertThat(c.chunkedPrefillSize()).isEqualTo(256);
    assertThat(c.maxPrefillTokens()).isEqualTo(1024);
    assertThat(c.threads()).isEqualTo(3);
    assertThat(c.speculative()).isEqualTo(new SpeculativeConfig(5, 2, 6, 3));
  }

  @Test
  void anInvalidValueIsAnArgumentErrorNamingIt() {
    assertThatThrownBy(() -> parse("--kv-store-type=fp8").engineConfig())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("--kv-store-type")
        .hasMessageContaining("bf16");
    assertThatThrownBy(() -> parse("--schedule-policy=random").engineConfig())
        .hasMessageContaining("--schedule-policy");
    assertThatThrownBy(() -> parse("--mem-fraction-static=1.5").engineConfig())
        .hasMessageContaining("mem_fraction_static");
    assertThatThrownBy(() -> parse("--speculative-num-draft-tokens=17").engineConfig())
        .hasMessageContaining("speculative_num_draft_tokens must be 1 to 16");
    assertThatThrownBy(
            () ->
                parse(
                        "--speculative-num-draft-tokens=4",
                        "--speculative-ngram-min-match-window-size=3",
                        "--speculative-ngram-max-match-window-size=2")
                    .engineConfig())
        .hasMessageContaining("min match window");
    assertThatThrownBy(() -> parse("--backend=banana").checkBackend())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("banana");
  }
}
