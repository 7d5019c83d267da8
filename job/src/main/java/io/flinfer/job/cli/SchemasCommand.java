package io.flinfer.job.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.flinfer.avro.Completion;
import io.flinfer.avro.CompletionChunk;
import io.flinfer.avro.DeadLetter;
import io.flinfer.avro.PromptRequest;
import io.flinfer.avro.history.PromptRequests;
import io.flinfer.avro.history.RecordHistory;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import org.apache.avro.Schema;
import org.apache.avro.SchemaNormalization;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Prints the records' schemas for clients in any language: each one's canonical form, its
 * CRC-64-AVRO fingerprint and the 10-byte header that starts its single-object encoding, and a
 * self-contained .avsc (named types inlined, so it parses alone).
 */
@Command(
    name = "schemas",
    mixinStandardHelpOptions = true,
    description = "Print the records' Avro schemas, fingerprints and single-object headers.")
public final class SchemasCommand implements Callable<Integer> {
  @Option(
      names = "--avsc",
      paramLabel = "RECORD",
      description =
          "Print only this record's self-contained .avsc (PromptRequest, Completion,"
              + " CompletionChunk, DeadLetter).")
  String avsc;

  static Map<String, Schema> schemas() {
    Map<String, Schema> m = new LinkedHashMap<>();
    m.put("PromptRequest", PromptRequest.getClassSchema());
    m.put("Completion", Completion.getClassSchema());
    m.put("CompletionChunk", CompletionChunk.getClassSchema());
    m.put("DeadLetter", DeadLetter.getClassSchema());
    return m;
  }

  /** The bytes that start a record's single-object encoding: C3 01 and the fingerprint (LE). */
  static String header(long fingerprint) {
    StringBuilder b = new StringBuilder("c301");
    for (int i = 0; i < 8; i++) {
      b.append(String.format("%02x", (fingerprint >>> (8 * i)) & 0xff));
    }
    return b.toString();
  }

  @Override
  public Integer call() throws Exception {
    Map<String, Schema> all = schemas();
    if (avsc != null) {
      Schema s = all.get(avsc);
      if (s == null) {
        throw new IllegalArgumentException("--avsc: no record " + avsc + " (" + all.keySet() + ")");
      }
      System.out.println(s.toString(true));
      return 0;
    }
    ObjectMapper json = new ObjectMapper();
    ArrayNode out = json.createArrayNode();
    for (Map.Entry<String, Schema> e : all.entrySet()) {
      long fp = SchemaNormalization.parsingFingerprint64(e.getValue());
      ObjectNode n = out.addObject();
      n.put("record", e.getKey());
      n.put("fingerprint", Long.toUnsignedString(fp, 16));
      n.put("single_object_header_hex", header(fp));
      n.put("canonical_form", SchemaNormalization.toParsingForm(e.getValue()));
      n.set("avsc", json.readTree(e.getValue().toString()));
      List<Schema> history =
          switch (e.getKey()) {
            case "PromptRequest" -> PromptRequests.history();
            case "Completion" -> RecordHistory.COMPLETIONS.schemas();
            case "CompletionChunk" -> RecordHistory.CHUNKS.schemas();
            case "DeadLetter" -> RecordHistory.DEAD_LETTERS.schemas();
            default -> null;
          };
      if (history != null) {
        ArrayNode earlier = n.putArray("earlier_fingerprints");
        for (Schema h : history) {
          long f = SchemaNormalization.parsingFingerprint64(h);
          if (f != fp) {
            earlier.add(Long.toUnsignedString(f, 16));
          }
        }
      }
    }
    System.out.println(json.writerWithDefaultPrettyPrinter().writeValueAsString(out));
    return 0;
  }
}
