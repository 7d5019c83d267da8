package io.flinfer.job.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinfer.runtime.testing.SharedFiles;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * A command that cannot start, or whose job fails, says why in one line and exits non-zero: never a
 * stack trace, never a process that hangs on.
 */
class CommandErrorsITCase {
  @TempDir Path dir;

  private record Outcome(int rc, String err, long millis) {
    /** The lines starting with "error:"; exactly one is expected. */
    List<String> errorLines() {
      return err.lines().filter(l -> l.startsWith("error:")).toList();
    }
  }

  private Outcome flinfer(String... args) {
    StringWriter err = new StringWriter();
    CommandLine cli = FlinferCommand.commandLine();
    cli.setErr(new PrintWriter(err, true));
    long start = System.nanoTime();
    int rc = cli.execute(args);
    return new Outcome(rc, err.toString(), (System.nanoTime() - start) / 1_000_000);
  }

  private String[] run(String... extra) {
    List<String> args =
        new ArrayList<>(
            List.of(
                "run",
                "--once",
                "--model",
                SharedFiles.stories260kDir().toString(),
                "--data-dir",
                dir.resolve("data").toString(),
                "--kafka-port",
                "0",
                "--gateway-port",
                "0",
                "--metrics-port",
                "0",
                "--web-port",
                "0"));
    args.addAll(List.of(extra));
    return args.toArray(String[]::new);
  }

  private static void assertOneLine(Outcome o, int rc, String mentions) {
    assertThat(o.rc()).as(o.err()).isEqualTo(rc);
    assertThat(o.errorLines()).as(o.err()).hasSize(1);
    assertThat(o.errorLines().get(0)).contains(mentions);
    assertThat(o.err()).doesNotContain("\tat ").doesNotContain("Exception in thread");
  }

  @Test
  @Timeout(60)
  void badArgumentsStopARunBeforeAnythingStarts() throws Exception {
    assertOneLine(flinfer(run("--backend", "banana")), 2, "banana");
    assertOneLine(flinfer(run("--parallelism", "0")), 2, "--parallelism");
    assertOneLine(flinfer(run("--checkpoint-interval-ms", "0")), 2, "--checkpoint-interval-ms");
    assertOneLine(flinfer(run("--prompts", "/no/such/prompts.txt")), 2, "/no/such/prompts.txt");
    assertOneLine(flinfer(run("--kv-store-type", "fp8")), 2, "--kv-store-type");
    assertOneLine(flinfer(run("--dedupe-window", "soon")), 2, "--dedupe-window");
    Path big = Files.writeString(dir.resolve("big.txt"), "ok\n" + "x".repeat(1_100_000) + "\n");
    assertOneLine(flinfer(run("--prompts", big.toString())), 2, "--prompts line 2");
    try (ServerSocket taken = new ServerSocket(0)) {
      List<String> args = new ArrayList<>(List.of(run()));
      args.set(args.indexOf("--web-port") + 1, String.valueOf(taken.getLocalPort()));
      assertOneLine(flinfer(args.toArray(String[]::new)), 2, "--web-port");
    }
    assertThat(dir.resolve("data")).doesNotExist();
    assertOneLine(flinfer("generate", "--prompt", "Hi", "--max-new-tokens", "-5"), 2, "at least 1");
    assertOneLine(flinfer("run", "--no-such-option"), 2, "--no-such-option");
  }

  @Test
  @Timeout(120)
  void aRunWhoseJobFailsExitsNonZeroWithTheCause() throws Exception {
    Path broken = dir.resolve("broken.gguf");
    Files.write(broken, new byte[] {'G', 'G', 'U', 'F', 3, 0, 0, 0, 1, 2, 3});
    Outcome o =
        flinfer(
            "run",
            "--once",
            "--model",
            broken.toString(),
            "--data-dir",
            dir.resolve("data").toString(),
            "--kafka-port",
            "0",
            "--gateway-port",
            "0",
            "--metrics-port",
            "0",
            "--web-port",
            "0",
            "--backend",
            "cpu");
    assertOneLine(o, 1, "the job failed");
    assertThat(o.errorLines().get(0)).contains("broken.gguf");
  }
}
