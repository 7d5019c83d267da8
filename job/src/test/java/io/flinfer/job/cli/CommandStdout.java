package io.flinfer.job.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/** What a {@code flinfer} command run in this JVM prints on stdout, once it has succeeded. */
public final class CommandStdout {
  private CommandStdout() {}

  /** Runs {@code flinfer args...}, asserts it exits 0, and returns its stdout. */
  public static String of(String... args) {
    PrintStream old = System.out;
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
    try {
      assertThat(FlinferCommand.commandLine().execute(args)).isZero();
    } finally {
      System.setOut(old);
    }
    return out.toString(StandardCharsets.UTF_8);
  }
}
