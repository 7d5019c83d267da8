package io.flinfer.job.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinfer.runtime.testing.SharedFiles;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** {@code flinfer run --once} starts everything in-process, serves the prompts and exits. */
class RunCommandITCase {
  @TempDir Path dir;

  @Test
  @Timeout(180)
  void servesAPromptsFileAndExits() throws Exception {
    Path prompts =
        Files.writeString(dir.resolve("prompts.txt"), "Once upon a time\n\nLily and Ben\n");
    String printed =
        CommandStdout.of(
            "run",
            "--once",
            "--model",
            SharedFiles.stories260kDir().toString(),
            "--prompts",
            prompts.toString(),
            "--max-new-tokens",
            "12",
            "--gateway-port",
            "0",
            "--metrics-port",
            "0",
            "--web-port",
            "0",
            "--kafka-port",
            "0",
            "--data-dir",
            dir.resolve("data").toString(),
            "--backend",
            "cpu");
    // Prompts are sampled (no temperature or seed set), so the words vary from run to run: each
    // prompt's line is checked, not its text.
    assertThat(printed)
        .containsPattern("(?s)\\[run-\\w+-0\\] .+?\\(length, 12 tokens")
        .containsPattern("(?s)\\[run-\\w+-1\\] .+?\\(length, 12 tokens");
    assertThat(printed.lines().filter(l -> l.matches("\\[run-\\w+-[01]\\] .*"))).hasSize(2);
    // Every prompt was answered: a next run starts afresh.
    assertThat(dir.resolve("data/pending-requests")).doesNotExist();
  }
}
