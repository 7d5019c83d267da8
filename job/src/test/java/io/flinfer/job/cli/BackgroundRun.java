package io.flinfer.job.cli;

import java.io.InputStream;
import java.io.OutputStream;
import java.io.PipedInputStream;
import java.io.PipedOutputStream;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * {@code flinfer run --once --prompts -} in this JVM on a thread of its own, its stdin a pipe the
 * test writes prompts to, its stdout discarded. Closing it ends stdin, and the run then exits once
 * every prompt is answered; {@link #close} returns its exit code.
 */
public final class BackgroundRun implements AutoCloseable {
  private final PipedOutputStream stdin = new PipedOutputStream();
  private final InputStream oldIn = System.in;
  private final PrintStream oldOut = System.out;
  private final CompletableFuture<Integer> run;

  /** Starts {@code run --once --prompts -} with {@code args} added. */
  public BackgroundRun(String... args) throws Exception {
    System.setIn(new PipedInputStream(stdin));
    System.setOut(new PrintStream(OutputStream.nullOutputStream(), true, StandardCharsets.UTF_8));
    List<String> all = new ArrayList<>(List.of("run", "--once", "--prompts", "-"));
    all.addAll(List.of(args));
    run =
        CompletableFuture.supplyAsync(
            () -> FlinferCommand.commandLine().execute(all.toArray(String[]::new)));
  }

  public static int freePort() throws Exception {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  /** Sends one prompt line. */
  public void send(String prompt) throws Exception {
    stdin.write((prompt + "\n").getBytes(StandardCharsets.UTF_8));
    stdin.flush();
  }

  public boolean isDone() {
    return run.isDone();
  }

  /** Ends stdin and waits for the run to exit; its exit code. */
  public int exitCode() throws Exception {
    try {
      stdin.close();
      return run.get();
    } finally {
      System.setIn(oldIn);
      System.setOut(oldOut);
    }
  }

  @Override
  public void close() throws Exception {
    exitCode();
  }
}
