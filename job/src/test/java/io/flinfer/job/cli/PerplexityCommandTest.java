package io.flinfer.job.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinfer.runtime.testing.SharedFiles;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PerplexityCommandTest {

  /** The output has llama-perplexity's form: the running estimates, then the final one. */
  @Test
  void printsTheRunningEstimatesThenTheFinalOneAsLlamaPerplexityDoes(@TempDir Path dir)
      throws Exception {
    Path text = dir.resolve("text.txt");
    Files.writeString(
        text,
        Files.readString(SharedFiles.root().resolve("golden/stories260K-greedy.txt"))
            .replaceAll("(?m)^#.*\\n", ""));
    String out =
        CommandStdout.of(
            "perplexity",
            "--model",
            SharedFiles.stories260kDir().toString(),
            "--file",
            text.toString(),
            "--ctx",
            "64",
            "--chunks",
            "3",
            "--threads",
            "1");
    String[] lines = out.strip().split("\n");
    assertThat(lines).hasSize(2);
    assertThat(lines[0]).matches("\\[1\\][0-9]+\\.[0-9]{4},\\[2\\][0-9.]+,\\[3\\]([0-9.]+),");
    String last = lines[0].replaceAll(".*\\[3\\]([0-9.]+),", "$1");
    assertThat(lines[1]).startsWith("Final estimate: PPL = " + last + " +/- ");
  }
}
