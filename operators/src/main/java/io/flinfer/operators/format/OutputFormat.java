package io.flinfer.operators.format;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.Locale;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.EncoderFactory;
import org.apache.avro.message.BinaryMessageEncoder;
import org.apache.avro.specific.SpecificData;
import org.apache.avro.specific.SpecificDatumWriter;
import org.apache.avro.specific.SpecificRecordBase;

/** How the job writes its records: Avro single-object, Confluent's wire format, or JSON. */
public enum OutputFormat {
  AVRO,
  CONFLUENT,
  JSON;

  /** The format named {@code name} (avro, confluent, json). */
  public static OutputFormat of(String name) {
    try {
      return valueOf(name.toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "--output-format must be avro, confluent or json, not '" + name + "'");
    }
  }

  /**
   * Encodes records for one topic. With Confluent's format the record's schema is registered under
   * {@code <topic>-value} (the registry checks it against the subject's earlier versions) the first
   * time and its id written before each record.
   */
  public static final class Writer implements Serializable {
    private final OutputFormat format;
    private final String registryUrl;
    private final String subject;
    private transient SchemaRegistryClient registry;

    public Writer(OutputFormat format, String registryUrl, String topic) {
      if (format == CONFLUENT && registryUrl == null) {
        throw new IllegalArgumentException("--output-format confluent needs --schema-registry-url");
      }
      this.format = format;
      this.registryUrl = registryUrl;
      this.subject = topic + "-value";
    }

    /**
     * Registers {@code schema} now, so that a registry that is unreachable or refuses it stops the
     * job before it starts rather than at its first record.
     *
     * @throws IllegalArgumentException with the registry's answer
     */
    public void registerUpFront(org.apache.avro.Schema schema) {
      if (format != CONFLUENT) {
        return;
      }
      try {
        new SchemaRegistryClient(registryUrl).register(subject, schema);
      } catch (IOException e) {
        throw new IllegalArgumentException(
            "--output-format confluent: cannot register " + subject + ": " + e.getMessage(), e);
      }
    }

    public byte[] write(SpecificRecordBase record) {
      try {
        switch (format) {
          case JSON:
            return JsonRecords.write((GenericRecord) record);
          case CONFLUENT:
            {
              if (registry == null) {
                registry = new SchemaRegistryClient(registryUrl);
              }
              int id = registry.register(subject, record.getSchema());
              ByteArrayOutputStream out = new ByteArrayOutputStream();
              out.write(0);
              out.write(ByteBuffer.allocate(4).putInt(id).array());
              BinaryEncoder e = EncoderFactory.get().binaryEncoder(out, null);
              new SpecificDatumWriter<SpecificRecordBase>(record.getSchema()).write(record, e);
              e.flush();
              return out.toByteArray();
            }
          default:
            {
              ByteBuffer b =
                  new BinaryMessageEncoder<SpecificRecordBase>(
                          SpecificData.get(), record.getSchema())
                      .encode(record);
              byte[] out = new byte[b.remaining()];
              b.get(out);
              return out;
            }
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }
}
