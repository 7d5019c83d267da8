package io.flinfer.job.pipeline;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.util.Optional;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ExternalizedCheckpointRetention;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.execution.RecoveryClaimMode;
import org.apache.flink.core.fs.FileStatus;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;

/**
 * Checkpoints kept in a state folder (any filesystem Flink reads: a local path, {@code s3://},
 * ...), retained when the job is cancelled or its process dies, and resumed from on the next start:
 * a job killed with {@code kill -9} and started again the same way takes up every request it had
 * read, and its completions stay exactly once.
 *
 * <p>Flink writes each job's checkpoints to {@code <folder>/<job id>/chk-<n>/}, complete once its
 * {@code _metadata} file exists. A start resumes from the newest complete one and claims it, so
 * Flink deletes it once a newer checkpoint subsumes it and the folder does not grow.
 */
public final class DurableState {
  private DurableState() {}

  /**
   * Sets the checkpoint folder and retention on {@code conf} and, unless {@code restoreFrom} is
   * given (a savepoint or checkpoint path), the newest complete checkpoint in the folder as the
   * state to restore. Returns the path restored from, if any.
   */
  public static Optional<String> configure(Configuration conf, String folder, String restoreFrom) {
    URI uri = toUri(folder);
    conf.set(CheckpointingOptions.CHECKPOINT_STORAGE, "filesystem");
    conf.set(CheckpointingOptions.CHECKPOINTS_DIRECTORY, uri.toString());
    conf.set(
        CheckpointingOptions.EXTERNALIZED_CHECKPOINT_RETENTION,
        ExternalizedCheckpointRetention.RETAIN_ON_CANCELLATION);
    Optional<String> from =
        restoreFrom != null ? Optional.of(restoreFrom) : newestCheckpoint(uri).map(Path::toString);
    from.ifPresent(
        p -> {
          conf.set(StateRecoveryOptions.SAVEPOINT_PATH, p);
          conf.set(StateRecoveryOptions.RESTORE_MODE, RecoveryClaimMode.CLAIM);
        });
    return from;
  }

  /** The newest complete checkpoint under {@code folder}, of any job that wrote there. */
  public static Optional<Path> newestCheckpoint(URI folder) {
    try {
      Path root = new Path(folder);
      FileSystem fs = root.getFileSystem();
      if (!fs.exists(root)) {
        return Optional.empty();
      }
      Path best = null;
      long bestTime = Long.MIN_VALUE;
      for (FileStatus job : listOrEmpty(fs, root)) {
        if (!job.isDir()) {
          continue;
        }
        for (FileStatus chk : listOrEmpty(fs, job.getPath())) {
          if (!chk.isDir() || !chk.getPath().getName().startsWith("chk-")) {
            continue;
          }
          long t = modified(fs, new Path(chk.getPath(), "_metadata"));
          if (t > bestTime) {
            best = chk.getPath();
            bestTime = t;
          }
        }
      }
      return Optional.ofNullable(best);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read the state folder " + folder, e);
    }
  }

  /** A folder's entries; none when it is gone (a running job deletes subsumed checkpoints). */
  private static FileStatus[] listOrEmpty(FileSystem fs, Path p) throws IOException {
    try {
      FileStatus[] s = fs.listStatus(p);
      return s == null ? new FileStatus[0] : s;
    } catch (FileNotFoundException gone) {
      return new FileStatus[0];
    }
  }

  /** When a file was written, or Long.MIN_VALUE when it is not there (yet, or any more). */
  private static long modified(FileSystem fs, Path p) throws IOException {
    try {
      return fs.getFileStatus(p).getModificationTime();
    } catch (FileNotFoundException absent) {
      return Long.MIN_VALUE;
    }
  }

  /** A folder given as a URI ({@code s3://...}, {@code file:///...}) or a local path. */
  static URI toUri(String folder) {
    if (folder.matches("^[a-zA-Z][a-zA-Z0-9+.-]*://.*")) {
      return URI.create(folder);
    }
    return java.nio.file.Path.of(folder).toAbsolutePath().normalize().toUri();
  }
}
