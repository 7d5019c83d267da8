package io.flinfer.operators.format;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpServer;
import io.flinfer.avro.PromptRequest;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import org.junit.jupiter.api.Test;

/**
 * A registry that cannot answer is not a bad record: reading fails with {@link
 * RegistryUnavailableException} (the job restarts and reads the record again), while a registry
 * that answers "no such schema" makes the record undecodable (a dead letter).
 */
class RegistryOutageTest {
  private static final byte[] CONFLUENT_RECORD = {0, 0, 0, 0, 7, 2, 'x'};

  @Test
  void anUnreachableOrFailingRegistryIsAnOutageNotABadRecord() throws Exception {
    int closed;
    try (ServerSocket s = new ServerSocket(0)) {
      closed = s.getLocalPort();
    }
    RecordReader<PromptRequest> unreachable =
        RecordReader.prompts(new SchemaRegistryClient("http://127.0.0.1:" + closed));
    assertThatThrownBy(() -> unreachable.read(CONFLUENT_RECORD))
        .isInstanceOf(RegistryUnavailableException.class)
        .hasMessageContaining("did not answer");

    HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.createContext(
        "/",
        x -> {
          int status = x.getRequestURI().getPath().endsWith("/7") ? 503 : 404;
          byte[] body = "{\"error_code\": 40403, \"message\": \"Schema not found\"}".getBytes();
          x.sendResponseHeaders(status, body.length);
          x.getResponseBody().write(body);
          x.close();
        });
    server.start();
    try {
      String url = "http://127.0.0.1:" + server.getAddress().getPort();
      assertThatThrownBy(
              () -> RecordReader.prompts(new SchemaRegistryClient(url)).read(CONFLUENT_RECORD))
          .isInstanceOf(RegistryUnavailableException.class)
          .hasMessageContaining("503");
      byte[] unknownId = {0, 0, 0, 0, 8, 2, 'x'};
      assertThatThrownBy(() -> RecordReader.prompts(new SchemaRegistryClient(url)).read(unknownId))
          .isNotInstanceOf(RegistryUnavailableException.class)
          .hasMessageContaining("404");
    } finally {
      server.stop(0);
    }
  }
}
