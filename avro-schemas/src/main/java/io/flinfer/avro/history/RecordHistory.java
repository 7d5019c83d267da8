package io.flinfer.avro.history;

import io.flinfer.avro.Completion;
import io.flinfer.avro.CompletionChunk;
import io.flinfer.avro.DeadLetter;
import java.util.List;
import java.util.function.Supplier;
import org.apache.avro.Schema;
import org.apache.avro.message.BinaryMessageDecoder;

/**
 * The schemas the project has published for one record the job writes ({@code history/NAME-N.avsc},
 * oldest first), and decoders of all of them, so that a gateway or consumer started after an
 * upgrade still reads the records an older job wrote. {@code RecordHistoryTest} fails until the
 * current schema is published here.
 */
public final class RecordHistory<T> {
  public static final RecordHistory<Completion> COMPLETIONS =
      new RecordHistory<>(Completion.getClassSchema(), 3, () -> Completion.createDecoder(null));

  public static final RecordHistory<CompletionChunk> CHUNKS =
      new RecordHistory<>(
          CompletionChunk.getClassSchema(), 3, () -> CompletionChunk.createDecoder(null));

  public static final RecordHistory<DeadLetter> DEAD_LETTERS =
      new RecordHistory<>(DeadLetter.getClassSchema(), 2, () -> DeadLetter.createDecoder(null));

  private final Schema current;
  private final List<Schema> schemas;
  private final Supplier<BinaryMessageDecoder<T>> currentDecoder;

  /**
   * @param versions how many schemas have been published
   */
  private RecordHistory(
      Schema current, int versions, Supplier<BinaryMessageDecoder<T>> currentDecoder) {
    this.current = current;
    this.schemas = SchemaHistory.load(current.getName(), versions);
    this.currentDecoder = currentDecoder;
  }

  /** The record's schema in this build. */
  public Schema current() {
    return current;
  }

  /** The published schemas, oldest first. */
  public List<Schema> schemas() {
    return schemas;
  }

  /** A decoder of every published schema; not thread-safe. */
  public BinaryMessageDecoder<T> decoder() {
    return SchemaHistory.withAll(currentDecoder.get(), schemas);
  }
}
