package io.flinfer.runtime.grammar;

import java.util.HashSet;
import java.util.Random;
import java.util.Set;

/**
 * Random JSON Schemas of every supported construct: objects, arrays (unique or not), strings with
 * patterns, formats and lengths, bounded integers, enums and unions of them all, nested, for the
 * independent validator's check ({@link SchemaInstancesValidateTest}).
 */
final class RandomSchemas {
  private RandomSchemas() {}

  private static final String[] NAMES = {"a", "b", "ab", "name", "n"};
  private static final String[] PATTERNS = {"^a+b$", "^[a-c]{1,3}$", "x", "^(ab)*$", "^[0-9]+ d$"};
  private static final String[] FORMATS = {
    "date",
    "time",
    "date-time",
    "duration",
    "uuid",
    "ipv4",
    "ipv6",
    "email",
    "idn-email",
    "hostname",
    "uri",
    "uri-reference",
    "json-pointer",
    "byte"
  };

  /** A random schema of an object with properties v and w. */
  static String of(Random r) {
    return "{\"type\": \"object\", \"properties\": {\"v\": "
        + value(r, 0)
        + ", \"w\": "
        + value(r, 0)
        + "}}";
  }

  /** A random value schema; deeper ones are simpler, so that schemas stay finite. */
  private static String value(Random r, int depth) {
    int k = r.nextInt(depth > 2 ? 5 : 9);
    switch (k) {
      case 0:
        return "{\"type\": \"integer\""
            + (r.nextBoolean() ? ", \"minimum\": -5, \"maximum\": 30" : "")
            + "}";
      case 1:
        {
          StringBuilder s = new StringBuilder("{\"type\": \"string\"");
          if (r.nextInt(3) == 0)
            s.append(", \"pattern\": \"").append(PATTERNS[r.nextInt(PATTERNS.length)]).append('"');
          else if (r.nextInt(3) == 0)
            s.append(", \"format\": \"").append(FORMATS[r.nextInt(FORMATS.length)]).append('"');
          if (r.nextBoolean()) s.append(", \"minLength\": ").append(r.nextInt(3));
          if (r.nextBoolean()) s.append(", \"maxLength\": ").append(2 + r.nextInt(40));
          return s.append('}').toString();
        }
      case 2:
        return "{\"enum\": [\"x\", 1, null" + (r.nextBoolean() ? ", \"ab\"" : "") + "]}";
      case 3:
        return "{\"type\": \"boolean\"}";
      case 4:
        return "{\"type\": \"null\"}";
      case 5:
        return object(r, depth + 1);
      case 6:
        {
          String items = value(r, depth + 1);
          boolean unique = r.nextBoolean();
          return "{\"type\": \"array\", \"items\": "
              + items
              + (unique ? ", \"uniqueItems\": true" : "")
              + (r.nextBoolean() ? ", \"minItems\": " + r.nextInt(3) : "")
              + (r.nextBoolean() ? ", \"maxItems\": " + (3 + r.nextInt(3)) : "")
              + "}";
        }
      case 7:
        {
          StringBuilder s =
              new StringBuilder("{\"" + (r.nextInt(4) == 0 ? "oneOf" : "anyOf") + "\": [");
          int n = 2 + r.nextInt(3);
          for (int i = 0; i < n; i++) s.append(i > 0 ? ", " : "").append(value(r, depth + 1));
          return s.append("]}").toString();
        }
      default:
        return "{\"type\": \"object\", \"patternProperties\": {\""
            + PATTERNS[r.nextInt(2)]
            + "\": "
            + value(r, depth + 1)
            + "}}";
    }
  }

  /** A random object schema of up to three properties. */
  private static String object(Random r, int depth) {
    StringBuilder s = new StringBuilder("{\"type\": \"object\", \"properties\": {");
    int n = r.nextInt(4);
    Set<String> used = new HashSet<>();
    int j = 0;
    for (int i = 0; i < n; i++) {
      String name = NAMES[r.nextInt(NAMES.length)];
      if (!used.add(name)) continue;
      s.append(j++ > 0 ? ", " : "")
          .append('"')
          .append(name)
          .append("\": ")
          .append(value(r, depth + 1));
    }
    s.append("}");
    if (r.nextBoolean()) s.append(", \"additionalProperties\": false");
    return s.append('}').toString();
  }
}
