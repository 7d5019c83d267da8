package io.flinfer.job.format;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericDatumWriter;
import org.apache.avro.generic.IndexedRecord;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.EncoderFactory;

/**
 * Confluent's side of the wire: Flink's Confluent registry (de)serialization schemas over
 * Confluent's own Schema Registry client, from the shaded jar on Maven Central, loaded in a class
 * loader of their own (their bundled Flink format and shaded Avro classes first), and driven by
 * reflection. Records cross over as Avro binary, which shading does not change.
 */
final class ConfluentSerdes implements AutoCloseable {
  static final Path JAR = Path.of("target/confluent/flink-sql-avro-confluent-registry-2.1.0.jar");
  private static final String SHADED_AVRO = "org.apache.flink.avro.shaded.org.apache.avro.";

  private final URLClassLoader loader;
  private final String registryUrl;

  ConfluentSerdes(String registryUrl) throws IOException {
    if (!Files.isRegularFile(JAR)) {
      throw new IllegalStateException(JAR + " is missing: the build fetches it (mvn test)");
    }
    this.registryUrl = registryUrl;
    ClassLoader parent = ConfluentSerdes.class.getClassLoader();
    this.loader =
        new URLClassLoader(new URL[] {JAR.toUri().toURL()}, parent) {
          @Override
          protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            if (name.startsWith("org.apache.flink.formats.avro.")
                || name.startsWith("org.apache.flink.avro.")) {
              synchronized (getClassLoadingLock(name)) {
                Class<?> c = findLoadedClass(name);
                if (c == null) {
                  try {
                    c = findClass(name);
                  } catch (ClassNotFoundException notHere) {
                    c = super.loadClass(name, false);
                  }
                }
                return c;
              }
            }
            return super.loadClass(name, resolve);
          }
        };
  }

  private Class<?> schemaClass() throws ClassNotFoundException {
    return loader.loadClass(SHADED_AVRO + "Schema");
  }

  /** {@code schema} as the shaded Avro's Schema. */
  private Object shadedSchema(Schema schema) throws ReflectiveOperationException {
    Class<?> parser = loader.loadClass(SHADED_AVRO + "Schema$Parser");
    return parser
        .getMethod("parse", String.class)
        .invoke(parser.getConstructor().newInstance(), schema.toString());
  }

  /**
   * {@code record} in Confluent's wire format, its schema registered under {@code subject}, as
   * Flink's {@code ConfluentRegistryAvroSerializationSchema} writes it.
   */
  byte[] serialize(IndexedRecord record, String subject) throws Exception {
    Object schema = shadedSchema(record.getSchema());
    Class<?> serde =
        loader.loadClass(
            "org.apache.flink.formats.avro.registry.confluent.ConfluentRegistryAvroSerializationSchema");
    Object serializer =
        serde
            .getMethod("forGeneric", String.class, schemaClass(), String.class)
            .invoke(null, subject, schema, registryUrl);
    Object shadedRecord = toShaded(record, schema);
    Method serialize = method(serde, "serialize");
    return (byte[]) serialize.invoke(serializer, shadedRecord);
  }

  /**
   * A Confluent-format record read with {@code readerSchema} by Flink's {@code
   * ConfluentRegistryAvroDeserializationSchema}, as its fields' string forms by name.
   */
  Object deserialize(byte[] bytes, Schema readerSchema) throws Exception {
    Object schema = shadedSchema(readerSchema);
    Class<?> serde =
        loader.loadClass(
            "org.apache.flink.formats.avro.registry.confluent.ConfluentRegistryAvroDeserializationSchema");
    Object deserializer =
        serde
            .getMethod("forGeneric", schemaClass(), String.class)
            .invoke(null, schema, registryUrl);
    return method(serde, "deserialize").invoke(deserializer, (Object) bytes);
  }

  /** A field of a record {@link #deserialize} returned, as a string. */
  static String field(Object shadedRecord, String name) throws ReflectiveOperationException {
    Object v = shadedRecord.getClass().getMethod("get", String.class).invoke(shadedRecord, name);
    return String.valueOf(v);
  }

  private Object toShaded(IndexedRecord record, Object shadedSchema) throws Exception {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    BinaryEncoder e = EncoderFactory.get().binaryEncoder(out, null);
    new GenericDatumWriter<IndexedRecord>(record.getSchema()).write(record, e);
    e.flush();
    Class<?> readerClass = loader.loadClass(SHADED_AVRO + "generic.GenericDatumReader");
    Object reader = readerClass.getConstructor(schemaClass()).newInstance(shadedSchema);
    Class<?> factory = loader.loadClass(SHADED_AVRO + "io.DecoderFactory");
    Object decoders = factory.getMethod("get").invoke(null);
    Class<?> binaryDecoder = loader.loadClass(SHADED_AVRO + "io.BinaryDecoder");
    Object decoder =
        factory
            .getMethod("binaryDecoder", byte[].class, binaryDecoder)
            .invoke(decoders, out.toByteArray(), null);
    Class<?> decoderClass = loader.loadClass(SHADED_AVRO + "io.Decoder");
    return readerClass.getMethod("read", Object.class, decoderClass).invoke(reader, null, decoder);
  }

  private static Method method(Class<?> c, String name) {
    for (Method m : c.getMethods()) {
      if (m.getName().equals(name) && m.getParameterCount() == 1 && !m.isBridge()) {
        return m;
      }
    }
    throw new IllegalStateException(c + " has no " + name);
  }

  /** Confluent's own registry client, to pin the stand-in registry's answers. */
  Object registryClient() throws ReflectiveOperationException {
    Class<?> c =
        loader.loadClass(
            "org.apache.flink.avro.registry.confluent.shaded.io.confluent.kafka.schemaregistry.client.CachedSchemaRegistryClient");
    return c.getConstructor(String.class, int.class).newInstance(registryUrl, 100);
  }

  /** Registers through Confluent's client: the id, or the client's exception. */
  int registerWithConfluentClient(Object client, String subject, Schema schema) throws Exception {
    Class<?> avroSchema =
        loader.loadClass(
            "org.apache.flink.avro.registry.confluent.shaded.io.confluent.kafka.schemaregistry.avro.AvroSchema");
    Object parsed = avroSchema.getConstructor(String.class).newInstance(schema.toString());
    Class<?> parsedSchema =
        loader.loadClass(
            "org.apache.flink.avro.registry.confluent.shaded.io.confluent.kafka.schemaregistry.ParsedSchema");
    return (Integer)
        client
            .getClass()
            .getMethod("register", String.class, parsedSchema)
            .invoke(client, subject, parsed);
  }

  /** A subject's version numbers through Confluent's client. */
  @SuppressWarnings("unchecked")
  java.util.List<Integer> versionsWithConfluentClient(Object client, String subject)
      throws Exception {
    return (java.util.List<Integer>)
        client.getClass().getMethod("getAllVersions", String.class).invoke(client, subject);
  }

  /** One version's schema id and text through Confluent's client. */
  String[] versionWithConfluentClient(Object client, String subject, int version) throws Exception {
    Object m =
        client
            .getClass()
            .getMethod("getSchemaMetadata", String.class, int.class)
            .invoke(client, subject, version);
    return new String[] {
      String.valueOf(m.getClass().getMethod("getId").invoke(m)),
      (String) m.getClass().getMethod("getSchema").invoke(m)
    };
  }

  @Override
  public void close() throws IOException {
    loader.close();
  }
}
