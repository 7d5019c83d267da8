package io.flinfer.avro.history;

import io.flinfer.avro.Completion;
import java.util.List;
import org.apache.avro.Schema;
import org.apache.avro.message.BinaryMessageDecoder;

/**
 * Reads {@link Completion}s written with any schema the project has published ({@code
 * history/Completion-N.avsc}), so that a gateway or consumer started after an upgrade still reads
 * the answers already on the completions topic. {@code CompletionsTest} fails until the current
 * schema is published here.
 */
public final class Completions {
  /** How many schemas have been published. */
  public static final int VERSIONS = 3;

  private static final List<Schema> HISTORY = SchemaHistory.load("Completion", VERSIONS);

  private Completions() {}

  /** The published schemas, oldest first. */
  public static List<Schema> history() {
    return HISTORY;
  }

  /** A decoder of every published schema; not thread-safe. */
  public static BinaryMessageDecoder<Completion> decoder() {
    return SchemaHistory.withAll(Completion.createDecoder(null), HISTORY);
  }
}
