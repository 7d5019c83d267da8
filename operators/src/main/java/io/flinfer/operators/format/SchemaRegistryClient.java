package io.flinfer.operators.format;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.avro.Schema;
import org.apache.avro.SchemaNormalization;

/**
 * The calls of Confluent Schema Registry's REST API that the job makes: a writer schema by its id
 * ({@code GET /schemas/ids/{id}}); registering a schema under a subject ({@code POST
 * /subjects/{subject}/versions}, which the registry answers with the schema's id after its
 * compatibility check, or 409 when the schema is incompatible); and a subject's versions ({@code
 * GET /subjects/{subject}/versions[/{n}]}), where an Avro single-object record's writer schema is
 * looked for by fingerprint. Answers are cached: ids and versions never change their schema. A
 * small client of its own rather than Confluent's, which Maven Central has only inside a shaded SQL
 * connector.
 */
public final class SchemaRegistryClient {
  private static final String CONTENT_TYPE = "application/vnd.schemaregistry.v1+json";
  private static final ObjectMapper JSON = new ObjectMapper();

  private final String baseUrl;
  private final HttpClient http;
  private final Map<Integer, Schema> byId = new ConcurrentHashMap<>();
  private final Map<String, Integer> registered = new ConcurrentHashMap<>();
  private final Map<Long, Schema> byFingerprint = new ConcurrentHashMap<>();
  private final Map<String, Boolean> versionsSeen = new ConcurrentHashMap<>();

  public SchemaRegistryClient(String baseUrl) {
    this.baseUrl = baseUrl.endsWith("/") ? baseUrl.substring(0, baseUrl.length() - 1) : baseUrl;
    this.http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
  }

  /** The schema registered with id {@code id}. */
  public Schema schemaById(int id) throws IOException {
    Schema known = byId.get(id);
    if (known != null) {
      return known;
    }
    JsonNode body = call(HttpRequest.newBuilder(URI.create(baseUrl + "/schemas/ids/" + id)).GET());
    Schema s = new Schema.Parser().parse(body.path("schema").asText());
    byId.put(id, s);
    return s;
  }

  /**
   * The schema registered under {@code subject} whose Avro fingerprint (CRC-64-AVRO of its parsing
   * canonical form) is {@code fingerprint}, or null when no version of the subject has it.
   */
  public Schema schemaByFingerprint(String subject, long fingerprint) throws IOException {
    Schema known = byFingerprint.get(fingerprint);
    if (known != null) {
      return known;
    }
    JsonNode versions = call(HttpRequest.newBuilder(URI.create(subjectUrl(subject))).GET(), true);
    for (JsonNode v : versions) {
      String key = subject + "\u0000" + v.asInt();
      if (versionsSeen.putIfAbsent(key, Boolean.TRUE) == null) {
        JsonNode body =
            call(HttpRequest.newBuilder(URI.create(subjectUrl(subject) + "/" + v.asInt())).GET());
        Schema s = new Schema.Parser().parse(body.path("schema").asText());
        byFingerprint.putIfAbsent(SchemaNormalization.parsingFingerprint64(s), s);
      }
    }
    return byFingerprint.get(fingerprint);
  }

  private String subjectUrl(String subject) {
    return baseUrl
        + "/subjects/"
        + URLEncoder.encode(subject, StandardCharsets.UTF_8)
        + "/versions";
  }

  /** Registers {@code schema} under {@code subject} (if new) and returns its id. */
  public int register(String subject, Schema schema) throws IOException {
    String key = subject + "\u0000" + schema;
    Integer known = registered.get(key);
    if (known != null) {
      return known;
    }
    String request = JSON.writeValueAsString(Map.of("schema", schema.toString()));
    JsonNode body =
        call(
            HttpRequest.newBuilder(URI.create(subjectUrl(subject)))
                .header("Content-Type", CONTENT_TYPE)
                .POST(HttpRequest.BodyPublishers.ofString(request)));
    int id = body.path("id").asInt(-1);
    if (id < 0) {
      throw new IOException("the schema registry answered without an id: " + body);
    }
    registered.put(key, id);
    byId.putIfAbsent(id, schema);
    return id;
  }

  private JsonNode call(HttpRequest.Builder request) throws IOException {
    return call(request, false);
  }

  /**
   * @param emptyIfNotFound whether a 404 (an unknown subject) answers an empty array
   */
  private JsonNode call(HttpRequest.Builder request, boolean emptyIfNotFound) throws IOException {
    HttpResponse<String> r;
    try {
      r =
          http.send(
              request.header("Accept", CONTENT_TYPE).timeout(Duration.ofSeconds(30)).build(),
              HttpResponse.BodyHandlers.ofString());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new RegistryUnavailableException("interrupted while calling the schema registry", e);
    } catch (IOException e) {
      throw new RegistryUnavailableException(
          "the schema registry at " + baseUrl + " did not answer: " + e, e);
    }
    if (r.statusCode() == 404 && emptyIfNotFound) {
      return JSON.createArrayNode();
    }
    if (r.statusCode() / 100 == 5) {
      throw new RegistryUnavailableException(
          "schema registry " + r.request().uri() + " answered " + r.statusCode(), null);
    }
    if (r.statusCode() / 100 != 2) {
      String message;
      try {
        message = JSON.readTree(r.body()).path("message").asText(r.body());
      } catch (IOException notJson) {
        message = r.body();
      }
      throw new IOException(
          "schema registry " + r.request().uri() + " answered " + r.statusCode() + ": " + message);
    }
    return JSON.readTree(r.body());
  }
}
