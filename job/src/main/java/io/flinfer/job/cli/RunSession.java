package io.flinfer.job.cli;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.LinkedHashSet;
import java.util.Set;

/**
 * The prompts one {@code flinfer run} sent and still awaits, kept in its data folder so that a run
 * killed and started again awaits the same ones instead of sending its prompts a second time.
 * Request ids carry the session's start time, so two runs never reuse an id (the job answers an id
 * once).
 */
final class RunSession {
  private final Path file;
  private final String prefix;
  private final Set<String> pending = new LinkedHashSet<>();
  private final boolean resumed;
  private int next;

  private RunSession(Path file, boolean resumed) {
    this.file = file;
    this.prefix = "run-" + Long.toString(System.currentTimeMillis(), 36) + "-";
    this.resumed = resumed;
  }

  /** The unfinished session in {@code dataDir} (whose prompts are not sent again), or a new one. */
  static RunSession resumeOrStart(Path dataDir) throws IOException {
    Path file = dataDir.resolve("pending-requests");
    if (Files.exists(file)) {
      RunSession s = new RunSession(file, true);
      for (String id : Files.readAllLines(file, StandardCharsets.UTF_8)) {
        if (!id.isBlank()) {
          s.pending.add(id);
        }
      }
      if (!s.pending.isEmpty()) {
        return s;
      }
    }
    return new RunSession(file, false);
  }

  boolean resumed() {
    return resumed;
  }

  /** A new request id, recorded before its prompt is sent. */
  String send() throws IOException {
    String id = prefix + next++;
    Files.writeString(
        file,
        id + "\n",
        StandardCharsets.UTF_8,
        StandardOpenOption.CREATE,
        StandardOpenOption.APPEND);
    pending.add(id);
    return id;
  }

  /** Whether {@code id} is one this session awaits; it is awaited no more. */
  boolean answered(String id) {
    return pending.remove(id);
  }

  int pendingCount() {
    return pending.size();
  }

  /** Every prompt is answered: the next run starts a new session. */
  void finish() throws IOException {
    if (pending.isEmpty()) {
      Files.deleteIfExists(file);
    }
  }
}
