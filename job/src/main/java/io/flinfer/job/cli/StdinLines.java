package io.flinfer.job.cli;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.LinkedBlockingQueue;

/**
 * Lines of an input stream, read on a thread of their own so that a caller polls them without
 * blocking and sees the stream's end (a pipe's end does not show as "ready" input).
 */
final class StdinLines {
  private static final String END = new String("end of input"); // compared by identity

  private final LinkedBlockingQueue<String> lines = new LinkedBlockingQueue<>();
  private volatile boolean ended;

  StdinLines(InputStream in) {
    Thread reader =
        new Thread(
            () -> {
              try (BufferedReader r =
                  new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
                for (String line = r.readLine(); line != null; line = r.readLine()) {
                  lines.add(line);
                }
              } catch (IOException e) {
                System.err.println("stdin: " + e.getMessage());
              } finally {
                lines.add(END);
              }
            },
            "stdin-prompts");
    reader.setDaemon(true);
    reader.start();
  }

  /** The next line, or null when none is waiting. */
  String poll() {
    String line = lines.poll();
    if (line == END) {
      ended = true;
      return null;
    }
    return line;
  }

  /** Whether every line has been polled and the input has ended. */
  boolean ended() {
    return ended;
  }
}
