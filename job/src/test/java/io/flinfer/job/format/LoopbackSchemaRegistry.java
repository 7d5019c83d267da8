package io.flinfer.job.format;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.SchemaCompatibility;

/**
 * A Confluent Schema Registry on loopback speaking the REST calls that its clients make: register a
 * schema under a subject ({@code POST /subjects/{s}/versions}, BACKWARD compatibility with the
 * subject's latest version, 409 when incompatible), look one up ({@code POST /subjects/{s}}), fetch
 * by id ({@code GET /schemas/ids/{id}}), list a subject's versions and fetch one ({@code GET
 * /subjects/{s}/versions[/{n}|/latest]}). Ids are global: the same schema under two subjects has
 * one id, as Confluent's registry does. {@code ConfluentFormatsITCase} pins its answers against
 * Confluent's own client.
 */
final class LoopbackSchemaRegistry implements AutoCloseable {
  private static final ObjectMapper JSON = new ObjectMapper();

  private final HttpServer server;
  private final Map<String, Integer> idOf = new HashMap<>();
  private final List<String> schemas = new ArrayList<>();
  private final Map<String, List<Integer>> subjects = new HashMap<>();

  LoopbackSchemaRegistry() throws IOException {
    server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    server.createContext("/", this::handle);
    server.start();
  }

  String url() {
    return "http://127.0.0.1:" + server.getAddress().getPort();
  }

  /** Registers {@code schema} under {@code subject} directly (as another producer would). */
  synchronized int register(String subject, Schema schema) {
    String text = schema.toString();
    int id =
        idOf.computeIfAbsent(
            text,
            t -> {
              schemas.add(t);
              return schemas.size();
            });
    List<Integer> versions = subjects.computeIfAbsent(subject, k -> new ArrayList<>());
    if (!versions.contains(id)) {
      versions.add(id);
    }
    return id;
  }

  private synchronized void handle(HttpExchange x) throws IOException {
    try {
      String path = x.getRequestURI().getPath();
      String[] p = path.substring(1).split("/");
      if (x.getRequestMethod().equals("GET") && p.length == 3 && p[0].equals("schemas")) {
        int id = Integer.parseInt(p[2]);
        if (id < 1 || id > schemas.size()) {
          reply(x, 404, Map.of("error_code", 40403, "message", "Schema " + id + " not found"));
        } else {
          reply(x, 200, Map.of("schema", schemas.get(id - 1)));
        }
        return;
      }
      if (p.length >= 2 && p[0].equals("subjects")) {
        String subject = URLDecoder.decode(p[1], StandardCharsets.UTF_8);
        List<Integer> versions = subjects.getOrDefault(subject, List.of());
        if (x.getRequestMethod().equals("POST") && p.length == 3 && p[2].equals("versions")) {
          Schema schema = new Schema.Parser().parse(body(x).path("schema").asText());
          if (!versions.isEmpty()) {
            Schema latest =
                new Schema.Parser().parse(schemas.get(versions.get(versions.size() - 1) - 1));
            // BACKWARD: consumers on the new schema read what was written with the latest.
            if (SchemaCompatibility.checkReaderWriterCompatibility(schema, latest).getType()
                != SchemaCompatibility.SchemaCompatibilityType.COMPATIBLE) {
              reply(
                  x,
                  409,
                  Map.of(
                      "error_code",
                      409,
                      "message",
                      "Schema being registered is incompatible with an earlier schema for subject"
                          + " \""
                          + subject
                          + "\""));
              return;
            }
          }
          reply(x, 200, Map.of("id", register(subject, schema)));
          return;
        }
        if (x.getRequestMethod().equals("POST") && p.length == 2) {
          String text = new Schema.Parser().parse(body(x).path("schema").asText()).toString();
          Integer id = idOf.get(text);
          if (id == null || !versions.contains(id)) {
            reply(x, 404, Map.of("error_code", 40403, "message", "Schema not found"));
          } else {
            reply(x, 200, version(subject, versions.indexOf(id) + 1, id));
          }
          return;
        }
        if (x.getRequestMethod().equals("GET") && p.length == 3 && p[2].equals("versions")) {
          if (versions.isEmpty()) {
            reply(x, 404, Map.of("error_code", 40401, "message", "Subject not found."));
          } else {
            List<Integer> numbers = new ArrayList<>();
            for (int v = 1; v <= versions.size(); v++) {
              numbers.add(v);
            }
            reply(x, 200, numbers);
          }
          return;
        }
        if (x.getRequestMethod().equals("GET")
            && p.length == 4
            && p[3].chars().allMatch(Character::isDigit)) {
          int v = Integer.parseInt(p[3]);
          if (v < 1 || v > versions.size()) {
            reply(x, 404, Map.of("error_code", 40402, "message", "Version not found."));
          } else {
            reply(x, 200, version(subject, v, versions.get(v - 1)));
          }
          return;
        }
        if (x.getRequestMethod().equals("GET") && p.length == 4 && p[3].equals("latest")) {
          if (versions.isEmpty()) {
            reply(x, 404, Map.of("error_code", 40401, "message", "Subject not found."));
          } else {
            reply(x, 200, version(subject, versions.size(), versions.get(versions.size() - 1)));
          }
          return;
        }
      }
      reply(x, 404, Map.of("error_code", 404, "message", "HTTP 404 Not Found"));
    } catch (RuntimeException e) {
      reply(x, 500, Map.of("error_code", 500, "message", String.valueOf(e)));
    }
  }

  private Map<String, Object> version(String subject, int version, int id) {
    return Map.of("subject", subject, "version", version, "id", id, "schema", schemas.get(id - 1));
  }

  private static JsonNode body(HttpExchange x) throws IOException {
    return JSON.readTree(x.getRequestBody().readAllBytes());
  }

  private static void reply(HttpExchange x, int status, Object body) throws IOException {
    byte[] bytes = JSON.writeValueAsBytes(body);
    x.getResponseHeaders().set("Content-Type", "application/vnd.schemaregistry.v1+json");
    x.sendResponseHeaders(status, bytes.length);
    try (OutputStream out = x.getResponseBody()) {
      out.write(bytes);
    }
  }

  @Override
  public void close() {
    server.stop(0);
  }
}
