package io.flinfer.runtime.grammar;

import java.util.Locale;

/** What shape a request's output text must have. */
public enum ResponseFormat {
  /** Any text. */
  TEXT("text"),
  /** One JSON object and nothing after it ({@link JsonPrefix}). */
  JSON_OBJECT("json_object"),
  /** One JSON object that a JSON Schema describes ({@link JsonSchemaGrammar}). */
  JSON_SCHEMA("json_schema"),
  /** Text that a regular expression matches as a whole ({@link RegexGrammar}). */
  REGEX("regex"),
  /** Text that a context-free grammar in GBNF derives ({@link GbnfGrammar}). */
  GRAMMAR("grammar");

  private final String wireName;

  ResponseFormat(String wireName) {
    this.wireName = wireName;
  }

  /**
   * The detail of a request's {@code stop} where its output is complete: {@code json} where a JSON
   * value closed, {@code regex} or {@code grammar} where a match or derivation can go no further.
   */
  public String completeDetail() {
    return this == REGEX ? "regex" : this == GRAMMAR ? "grammar" : "json";
  }

  /** The name on the wire: OpenAI's {@code response_format.type}. */
  public String wireName() {
    return wireName;
  }

  /**
   * The format named {@code name} ("text", "json_object", "json_schema", "regex" or "grammar").
   *
   * @throws IllegalArgumentException naming the accepted values
   */
  public static ResponseFormat of(String name) {
    for (ResponseFormat f : values()) {
      if (f.wireName.equals(name.toLowerCase(Locale.ROOT))) {
        return f;
      }
    }
    throw new IllegalArgumentException(
        "response_format must be \"text\", \"json_object\", \"json_schema\", \"regex\" or \"grammar\", got \""
            + name
            + "\"");
  }
}
