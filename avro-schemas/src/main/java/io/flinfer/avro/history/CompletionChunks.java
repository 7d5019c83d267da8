package io.flinfer.avro.history;

import io.flinfer.avro.CompletionChunk;
import java.util.List;
import org.apache.avro.Schema;
import org.apache.avro.message.BinaryMessageDecoder;

/**
 * Reads {@link CompletionChunk}s written with any schema the project has published ({@code
 * history/CompletionChunk-N.avsc}), so that a gateway or consumer started after an upgrade still
 * reads the chunks an older job wrote. {@code CompletionChunksTest} fails until the current schema
 * is published here.
 */
public final class CompletionChunks {
  /** How many schemas have been published. */
  public static final int VERSIONS = 2;

  private static final List<Schema> HISTORY = SchemaHistory.load("CompletionChunk", VERSIONS);

  private CompletionChunks() {}

  /** The published schemas, oldest first. */
  public static List<Schema> history() {
    return HISTORY;
  }

  /** A decoder of every published schema; not thread-safe. */
  public static BinaryMessageDecoder<CompletionChunk> decoder() {
    return SchemaHistory.withAll(CompletionChunk.createDecoder(null), HISTORY);
  }
}
