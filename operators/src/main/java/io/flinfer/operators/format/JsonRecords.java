package io.flinfer.operators.format;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.specific.SpecificData;
import org.apache.avro.specific.SpecificRecord;

/**
 * Records as plain JSON objects with the Avro schema's field names, types and defaults: what a
 * client without Avro writes. Reading is strict: an unknown field with a value, a missing required
 * one or a value of the wrong type is an error naming the field (an unknown field that is null, a
 * newer schema's optional field left unset, is skipped). A union with null is the value or null; a
 * {@code long} may also be a string of digits (a JavaScript client cannot write every 64-bit
 * number), and a field marked {@link #JSON_TEXT} may be the JSON value itself rather than its text
 * (written back compactly, members in their order). Writing gives every field, with {@code long}s
 * as JSON numbers: the values the job writes stay within 2^53, where every JSON reader reads them
 * exactly.
 */
public final class JsonRecords {
  private static final ObjectMapper JSON = new ObjectMapper();

  /**
   * A string field's property saying that it holds JSON text (a schema, tools, arguments): a JSON
   * client may give that value as it is, an object or an array, instead of as a string.
   */
  public static final String JSON_TEXT = "json_text";

  private JsonRecords() {}

  /** A JSON text as a record of {@code schema}, decoded into its generated class. */
  public static <T extends SpecificRecord> T read(byte[] json, Schema schema)
      throws JsonRecordException {
    JsonNode node;
    try {
      node = JSON.readTree(json);
    } catch (IOException e) {
      String m = e instanceof JsonProcessingException j ? j.getOriginalMessage() : e.getMessage();
      throw new JsonRecordException("not JSON: " + m);
    }
    if (node == null || !node.isObject()) {
      throw new JsonRecordException("not a JSON object");
    }
    GenericRecord generic = (GenericRecord) value(node, schema, "");
    return toSpecific(generic, schema);
  }

  /** A record as one JSON object (UTF-8). */
  public static byte[] write(GenericRecord record) {
    try {
      return JSON.writeValueAsBytes(node(record, record.getSchema()));
    } catch (JsonProcessingException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static JsonNode jsonText(JsonNode v) {
    try {
      return JsonNodeFactory.instance.textNode(JSON.writeValueAsString(v));
    } catch (JsonProcessingException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static Object value(JsonNode n, Schema s, String path) throws JsonRecordException {
    switch (s.getType()) {
      case RECORD:
        {
          if (!n.isObject()) {
            throw wrong(path, "an object", n);
          }
          GenericRecord r = new GenericData.Record(s);
          for (Iterator<String> it = n.fieldNames(); it.hasNext(); ) {
            String name = it.next();
            // A null in a field this schema lacks is a newer schema's optional field left
            // unset: it changes nothing here. Any value in it would be ignored, so it is refused.
            if (s.getField(name) == null && !n.get(name).isNull()) {
              throw new JsonRecordException("unknown field '" + join(path, name) + "'");
            }
          }
          for (Schema.Field f : s.getFields()) {
            JsonNode v = n.get(f.name());
            if (v == null) {
              if (!f.hasDefaultValue()) {
                throw new JsonRecordException(
                    "missing required field '" + join(path, f.name()) + "'");
              }
              r.put(f.name(), GenericData.get().getDefaultValue(f));
            } else if (v.isContainerNode() && Boolean.TRUE.equals(f.getObjectProp(JSON_TEXT))) {
              r.put(f.name(), value(jsonText(v), f.schema(), join(path, f.name())));
            } else {
              r.put(f.name(), value(v, f.schema(), join(path, f.name())));
            }
          }
          return r;
        }
      case UNION:
        {
          if (n.isNull() && s.getTypes().stream().anyMatch(t -> t.getType() == Schema.Type.NULL)) {
            return null;
          }
          for (Schema t : s.getTypes()) {
            if (t.getType() != Schema.Type.NULL) {
              return value(n, t, path);
            }
          }
          throw wrong(path, "null", n);
        }
      case STRING:
        if (!n.isTextual()) {
          throw wrong(path, "a string", n);
        }
        return n.textValue();
      case BOOLEAN:
        if (!n.isBoolean()) {
          throw wrong(path, "true or false", n);
        }
        return n.booleanValue();
      case INT:
        if (!n.isIntegralNumber() || !n.canConvertToInt()) {
          throw wrong(path, "a 32-bit integer", n);
        }
        return n.intValue();
      case LONG:
        if (n.isTextual()) {
          try {
            return Long.parseLong(n.textValue());
          } catch (NumberFormatException e) {
            throw wrong(path, "a 64-bit integer", n);
          }
        }
        if (!n.isIntegralNumber() || !n.canConvertToLong()) {
          throw wrong(path, "a 64-bit integer", n);
        }
        return n.longValue();
      case FLOAT:
      case DOUBLE:
        if (!n.isNumber()) {
          throw wrong(path, "a number", n);
        }
        return s.getType() == Schema.Type.FLOAT ? (Object) n.floatValue() : n.doubleValue();
      case ARRAY:
        {
          if (!n.isArray()) {
            throw wrong(path, "an array", n);
          }
          List<Object> out = new ArrayList<>(n.size());
          for (int i = 0; i < n.size(); i++) {
            out.add(value(n.get(i), s.getElementType(), path + "[" + i + "]"));
          }
          return out;
        }
      case MAP:
        {
          if (!n.isObject()) {
            throw wrong(path, "an object", n);
          }
          Map<String, Object> out = new HashMap<>();
          for (Iterator<Map.Entry<String, JsonNode>> it = n.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            out.put(e.getKey(), value(e.getValue(), s.getValueType(), join(path, e.getKey())));
          }
          return out;
        }
      default:
        throw new JsonRecordException(
            "field '" + path + "' has Avro type " + s.getType() + ", which JSON input lacks");
    }
  }

  private static JsonNode node(Object v, Schema s) {
    JsonNodeFactory f = JsonNodeFactory.instance;
    if (v == null) {
      return f.nullNode();
    }
    switch (s.getType()) {
      case RECORD:
        {
          ObjectNode o = f.objectNode();
          GenericRecord r = (GenericRecord) v;
          for (Schema.Field field : s.getFields()) {
            o.set(field.name(), node(r.get(field.pos()), field.schema()));
          }
          return o;
        }
      case UNION:
        return node(v, s.getTypes().get(GenericData.get().resolveUnion(s, v)));
      case STRING:
        return f.textNode(v.toString());
      case BOOLEAN:
        return f.booleanNode((Boolean) v);
      case INT:
        return f.numberNode((Integer) v);
      case LONG:
        return f.numberNode((Long) v);
      case FLOAT:
        return f.numberNode((Float) v);
      case DOUBLE:
        return f.numberNode((Double) v);
      case BYTES:
        {
          ByteBuffer b = ((ByteBuffer) v).duplicate();
          byte[] bytes = new byte[b.remaining()];
          b.get(bytes);
          // Bytes as the ISO-8859-1 string Avro's own JSON encoding uses: one char per byte.
          return f.textNode(new String(bytes, StandardCharsets.ISO_8859_1));
        }
      case ARRAY:
        {
          var a = f.arrayNode();
          for (Object e : (List<?>) v) {
            a.add(node(e, s.getElementType()));
          }
          return a;
        }
      case MAP:
        {
          ObjectNode o = f.objectNode();
          ((Map<?, ?>) v).forEach((k, e) -> o.set(k.toString(), node(e, s.getValueType())));
          return o;
        }
      default:
        throw new IllegalArgumentException("no JSON form for Avro type " + s.getType());
    }
  }

  @SuppressWarnings("unchecked")
  private static <T extends SpecificRecord> T toSpecific(GenericRecord r, Schema s) {
    return (T) SpecificData.get().deepCopy(s, r);
  }

  private static String join(String path, String name) {
    return path.isEmpty() ? name : path + "." + name;
  }

  private static JsonRecordException wrong(String path, String expected, JsonNode got) {
    return new JsonRecordException(
        "field '"
            + path
            + "' must be "
            + expected
            + ", not "
            + got.getNodeType().toString().toLowerCase());
  }
}
