package io.flinfer.operators.format;

import io.flinfer.avro.Completion;
import io.flinfer.avro.CompletionChunk;
import io.flinfer.avro.DeadLetter;
import io.flinfer.avro.PromptRequest;
import io.flinfer.avro.history.PromptRequests;
import io.flinfer.avro.history.RecordHistory;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.HashMap;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.io.BinaryDecoder;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.message.BinaryMessageDecoder;
import org.apache.avro.message.MissingSchemaException;
import org.apache.avro.specific.SpecificData;
import org.apache.avro.specific.SpecificDatumReader;
import org.apache.avro.specific.SpecificRecord;

/**
 * Reads a record of one type in whichever format it came: Avro single-object (the schemas the
 * decoder knows, then those registered under the topic's subject), Confluent's wire format (the
 * writer schema fetched from the registry by its id and resolved against today's), or JSON. Not
 * thread-safe: one per operator or consumer.
 */
public final class RecordReader<T extends SpecificRecord> {
  private final Schema schema;
  private final BinaryMessageDecoder<T> avro;
  private final SchemaRegistryClient registry;
  private final Map<Integer, SpecificDatumReader<T>> byWriterId = new HashMap<>();
  private BinaryDecoder decoder;

  /**
   * @param registry the schema registry for Confluent-format records, or null (such records are
   *     then refused)
   */
  public RecordReader(Schema schema, BinaryMessageDecoder<T> avro, SchemaRegistryClient registry) {
    this.schema = schema;
    this.avro = avro;
    this.registry = registry;
  }

  /** Prompt requests of every published schema. */
  public static RecordReader<PromptRequest> prompts(SchemaRegistryClient registry) {
    return new RecordReader<>(PromptRequest.getClassSchema(), PromptRequests.decoder(), registry);
  }

  /** Completions of every published schema. */
  public static RecordReader<Completion> completions(SchemaRegistryClient registry) {
    return new RecordReader<>(
        Completion.getClassSchema(), RecordHistory.COMPLETIONS.decoder(), registry);
  }

  /** Completion chunks of every published schema. */
  public static RecordReader<CompletionChunk> chunks(SchemaRegistryClient registry) {
    return new RecordReader<>(
        CompletionChunk.getClassSchema(), RecordHistory.CHUNKS.decoder(), registry);
  }

  /** Dead letters of every published schema. */
  public static RecordReader<DeadLetter> deadLetters(SchemaRegistryClient registry) {
    return new RecordReader<>(
        DeadLetter.getClassSchema(), RecordHistory.DEAD_LETTERS.decoder(), registry);
  }

  /** Records of a generated class, Avro single-object in its current schema. */
  public static <T extends SpecificRecord> RecordReader<T> of(
      Schema schema, SchemaRegistryClient registry) {
    return new RecordReader<>(
        schema, new BinaryMessageDecoder<>(SpecificData.get(), schema), registry);
  }

  /** A decoded record and the format it came in. */
  public record Decoded<T>(T record, InputFormat format) {}

  /**
   * @throws RegistryUnavailableException when the schema registry could not answer
   * @throws IOException saying which formats were tried and why
   */
  public Decoded<T> read(byte[] bytes) throws IOException {
    return read(bytes, null);
  }

  /**
   * Reads a record from {@code topic}: an Avro single-object record whose schema this reader does
   * not know (a newer producer's) has its writer schema looked for among the versions registered
   * under the topic's subject ({@code <topic>-value}) in the schema registry.
   *
   * @throws IOException saying which formats were tried and why
   */
  public Decoded<T> read(byte[] bytes, String topic) throws IOException {
    String name = schema.getName();
    InputFormat format = InputFormat.of(bytes);
    if (format == null) {
      throw new IOException(
          "not a "
              + name
              + " in any format read here (Avro single-object: starts C3 01; Confluent wire"
              + " format: 00 and a schema id; JSON: an object); the record starts "
              + start(bytes));
    }
    try {
      return new Decoded<>(
          switch (format) {
            case AVRO -> singleObject(bytes, topic);
            case CONFLUENT -> confluent(bytes);
            case JSON -> JsonRecords.<T>read(bytes, schema);
          },
          format);
    } catch (JsonRecordException e) {
      throw new IOException("JSON " + name + ": " + e.getMessage());
    } catch (RegistryUnavailableException e) {
      throw e; // not the record's fault: it must be read again, not refused
    } catch (IOException | RuntimeException e) {
      throw new IOException(
          format.label() + " " + name + " that does not decode: " + e.getMessage(), e);
    }
  }

  private T singleObject(byte[] bytes, String topic) throws IOException {
    try {
      return avro.decode(ByteBuffer.wrap(bytes));
    } catch (MissingSchemaException unknown) {
      if (registry == null || topic == null || bytes.length < 10) {
        throw unknown;
      }
      long fingerprint = ByteBuffer.wrap(bytes, 2, 8).order(ByteOrder.LITTLE_ENDIAN).getLong();
      Schema writer = registry.schemaByFingerprint(topic + "-value", fingerprint);
      if (writer == null) {
        throw new IOException(
            unknown.getMessage()
                + ", and no version registered under subject "
                + topic
                + "-value has it");
      }
      avro.addSchema(writer);
      return avro.decode(ByteBuffer.wrap(bytes));
    }
  }

  private T confluent(byte[] bytes) throws IOException {
    if (registry == null) {
      throw new IOException("Confluent wire format, but no schema registry is configured");
    }
    int id = ByteBuffer.wrap(bytes, 1, 4).getInt();
    SpecificDatumReader<T> reader = byWriterId.get(id);
    if (reader == null) {
      // Resolving a writer schema against the reader's is costly: once per id.
      reader = new SpecificDatumReader<>(registry.schemaById(id), schema);
      byWriterId.put(id, reader);
    }
    decoder = DecoderFactory.get().binaryDecoder(bytes, 5, bytes.length - 5, decoder);
    return reader.read(null, decoder);
  }

  private static String start(byte[] b) {
    StringBuilder s = new StringBuilder();
    for (int i = 0; i < Math.min(8, b.length); i++) {
      s.append(String.format("%02X ", b[i] & 0xff));
    }
    return b.length == 0 ? "(empty)" : s.toString().trim();
  }
}
