package io.flinfer.avro.history;

import io.flinfer.avro.PromptRequest;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import org.apache.avro.Schema;
import org.apache.avro.message.BinaryMessageDecoder;

/**
 * Reads {@link PromptRequest}s written with any schema the project has published: every one is kept
 * in {@code history/PromptRequest-N.avsc}, so a producer on an older schema, and a checkpoint that
 * holds requests read under one, still decode (fields they lack take their defaults). Publishing a
 * new schema means adding it here: {@code PromptRequestsTest} fails until the current one is.
 */
public final class PromptRequests {
  /** How many schemas have been published. */
  public static final int VERSIONS = 10;

  private static final List<Schema> HISTORY = SchemaHistory.load("PromptRequest", VERSIONS);

  private PromptRequests() {}

  /** The published schemas, oldest first. */
  public static List<Schema> history() {
    return HISTORY;
  }

  /**
   * A decoder for single-object encoded requests of every published schema. Decoders are not
   * thread-safe: one per thread or operator instance.
   */
  public static BinaryMessageDecoder<PromptRequest> decoder() {
    return SchemaHistory.withAll(PromptRequest.createDecoder(null), HISTORY);
  }

  /** Decodes one request with {@code decoder}; an undecodable one is an {@link IOException}. */
  public static PromptRequest decode(BinaryMessageDecoder<PromptRequest> decoder, byte[] bytes)
      throws IOException {
    return decoder.decode(ByteBuffer.wrap(bytes));
  }
}
