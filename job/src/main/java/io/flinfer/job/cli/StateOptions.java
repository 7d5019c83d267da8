package io.flinfer.job.cli;

import io.flinfer.job.pipeline.DurableState;
import java.nio.file.Path;
import java.util.Optional;
import org.apache.flink.configuration.Configuration;
import picocli.CommandLine.Option;

/** Where a job keeps its checkpoints, and what it resumes from. */
final class StateOptions {
  @Option(
      names = "--state-dir",
      paramLabel = "DIR",
      description =
          "Checkpoints go here (a path or a URI every Flink process reaches) and are kept when the"
              + " job stops; a start resumes from the newest complete one found here.")
  String stateDir;

  @Option(
      names = "--from-savepoint",
      paramLabel = "PATH",
      description = "Resume from this savepoint or checkpoint instead.")
  String fromSavepoint;

  /** The default state folder of an in-process job: under ~/.cache/flinfer/state/. */
  static Path defaultFolder(String name) {
    return Path.of(System.getProperty("user.home"), ".cache", "flinfer", "state", name);
  }

  /**
   * Configures durable checkpoints in {@code folder} (the option's, else {@code fallback}; none:
   * Flink's own configuration decides) and prints where state is kept and what is resumed.
   */
  Optional<String> apply(Configuration conf, String fallback) {
    String folder = stateDir != null ? stateDir : fallback;
    if (folder == null) {
      if (fromSavepoint != null) {
        conf.setString("execution.state-recovery.path", fromSavepoint);
      }
      return Optional.ofNullable(fromSavepoint);
    }
    Optional<String> from = DurableState.configure(conf, folder, fromSavepoint);
    System.err.printf(
        "state in %s%s%n", folder, from.map(p -> "; resuming from " + p).orElse("; a fresh start"));
    return from;
  }
}
