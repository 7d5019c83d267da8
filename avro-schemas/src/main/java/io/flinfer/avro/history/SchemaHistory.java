package io.flinfer.avro.history;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.avro.Schema;
import org.apache.avro.message.BinaryMessageDecoder;

/** The published schemas of one record, kept as {@code history/NAME-N.avsc}, oldest first. */
final class SchemaHistory {
  private SchemaHistory() {}

  /** {@code decoder}, which now also reads every schema in {@code history}. */
  static <T> BinaryMessageDecoder<T> withAll(
      BinaryMessageDecoder<T> decoder, List<Schema> history) {
    for (Schema s : history) {
      decoder.addSchema(s);
    }
    return decoder;
  }

  static List<Schema> load(String name, int versions) {
    List<Schema> out = new ArrayList<>();
    for (int v = 1; v <= versions; v++) {
      String file = name + "-" + v + ".avsc";
      try (InputStream in = SchemaHistory.class.getResourceAsStream(file)) {
        if (in == null) {
          throw new IllegalStateException("missing schema history file " + file);
        }
        out.add(new Schema.Parser().parse(in));
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    return List.copyOf(out);
  }
}
