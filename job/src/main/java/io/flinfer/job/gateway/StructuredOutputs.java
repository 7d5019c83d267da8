package io.flinfer.job.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import io.flinfer.avro.PromptRequest;
import io.flinfer.runtime.grammar.GbnfGrammar;
import io.flinfer.runtime.grammar.JsonSchemaGrammar;
import io.flinfer.runtime.grammar.RegexGrammar;
import io.flinfer.runtime.grammar.ResponseFormat;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * The servers' own parameters for structured output, beside OpenAI's {@code response_format}, into
 * a record's response format: SGLang's {@code regex} and {@code ebnf}; vLLM's {@code
 * structured_outputs} ({@code json}, {@code json_object}, {@code regex}, {@code choice} or {@code
 * grammar}) and its older {@code guided_json}, {@code guided_regex}, {@code guided_choice} and
 * {@code guided_grammar}. A choice of texts is the regex of exactly them; grammars are GBNF
 * (llama.cpp's, which SGLang's and vLLM's EBNF grammars also take). At most one of them, and not
 * beside a {@code response_format} other than text.
 */
final class StructuredOutputs {
  /** The body's parameters this reads, in the order they are read. */
  private static final List<String> READ =
      List.of(
          "regex",
          "ebnf",
          "guided_regex",
          "guided_choice",
          "guided_json",
          "guided_grammar",
          "structured_outputs");

  static final Set<String> PARAMETERS = Set.copyOf(READ);

  /** A response format and its text (a regex or a schema; null for json_object). */
  private record Format(ResponseFormat format, String text) {}

  private StructuredOutputs() {}

  /**
   * Sets {@code r}'s response format from {@code body}'s parameters, if it has one; whether it had.
   */
  static boolean read(JsonNode body, PromptRequest.Builder r) throws ApiError {
    String param = null;
    Format found = null;
    for (String name : READ) {
      JsonNode v = body.get(name);
      if (v == null || v.isNull()) {
        continue;
      }
      if (param != null) {
        throw ApiError.badParameter(name, "cannot be given with " + param);
      }
      param = name;
      found =
          switch (name) {
            case "guided_choice" -> choices(name, v);
            case "guided_json" -> schema(name, v);
            case "ebnf", "guided_grammar" -> grammar(name, v);
            case "structured_outputs" -> structured(v);
            default -> regex(name, v);
          };
    }
    if (found == null) {
      return false;
    }
    String given = r.getResponseFormat(); // null where the body gave none
    if (given != null && !ResponseFormat.TEXT.wireName().equals(given)) {
      throw ApiError.badParameter(param, "cannot be given with a response_format");
    }
    r.setResponseFormat(found.format.wireName());
    if (found.format == ResponseFormat.REGEX) {
      r.setRegex(found.text);
    } else if (found.format == ResponseFormat.GRAMMAR) {
      r.setGrammar(found.text);
    } else if (found.format == ResponseFormat.JSON_SCHEMA) {
      r.setJsonSchema(found.text);
    }
    return true;
  }

  private static Format regex(String name, JsonNode v) throws ApiError {
    if (!v.isTextual()) {
      throw ApiError.badParameter(name, "must be a string");
    }
    return compiled(name, v.asText());
  }

  private static Format compiled(String name, String regex) throws ApiError {
    try {
      RegexGrammar.compile(regex);
    } catch (IllegalArgumentException e) {
      throw ApiError.badParameter(name, e.getMessage());
    }
    return new Format(ResponseFormat.REGEX, regex);
  }

  /** A context-free grammar in GBNF. */
  private static Format grammar(String name, JsonNode v) throws ApiError {
    if (!v.isTextual()) {
      throw ApiError.badParameter(name, "must be a string");
    }
    try {
      GbnfGrammar.compile(v.asText());
    } catch (IllegalArgumentException e) {
      throw ApiError.badParameter(name, e.getMessage());
    }
    return new Format(ResponseFormat.GRAMMAR, v.asText());
  }

  /** A choice of texts as the regex that matches exactly them. */
  private static Format choices(String name, JsonNode v) throws ApiError {
    if (!v.isArray() || v.isEmpty()) {
      throw ApiError.badParameter(name, "must be a non-empty array of strings");
    }
    List<String> texts = new ArrayList<>();
    for (JsonNode c : v) {
      if (!c.isTextual()) {
        throw ApiError.badParameter(name, "must be a non-empty array of strings");
      }
      texts.add(c.asText());
    }
    return compiled(name, RegexGrammar.ofChoices(texts));
  }

  /** A JSON Schema, as an object or as its JSON text (vLLM takes both). */
  private static Format schema(String name, JsonNode v) throws ApiError {
    String schema = v.isTextual() ? v.asText() : v.toString();
    if (!v.isTextual() && !v.isObject()) {
      throw ApiError.badParameter(name, "must be a JSON Schema (an object, or its JSON text)");
    }
    try {
      JsonSchemaGrammar.compile(schema);
    } catch (IllegalArgumentException e) {
      throw ApiError.badParameter(name, e.getMessage());
    }
    return new Format(ResponseFormat.JSON_SCHEMA, schema);
  }

  /**
   * vLLM's {@code structured_outputs}: one of {@code json}, {@code json_object}, {@code regex} and
   * {@code choice}.
   */
  private static Format structured(JsonNode v) throws ApiError {
    if (!v.isObject()) {
      throw ApiError.badParameter("structured_outputs", "must be an object");
    }
    String given = null;
    Format found = null;
    for (var it = v.fields(); it.hasNext(); ) {
      var member = it.next();
      JsonNode value = member.getValue();
      if (value.isNull() || value.isBoolean() && !value.asBoolean()) {
        continue; // unset, as vLLM's client sends what it does not use
      }
      String name = "structured_outputs." + member.getKey();
      if (given != null) {
        throw ApiError.badParameter(name, "cannot be given with " + given);
      }
      given = name;
      found =
          switch (member.getKey()) {
            case "regex" -> regex(name, value);
            case "choice" -> choices(name, value);
            case "json" -> schema(name, value);
            case "json_object" -> new Format(ResponseFormat.JSON_OBJECT, null);
            case "grammar" -> grammar(name, value);
            default ->
                throw ApiError.badParameter(
                    name, "is not supported: give json, json_object, regex, choice or grammar");
          };
    }
    if (found == null) {
      throw ApiError.badParameter(
          "structured_outputs", "must give one of json, json_object, regex, choice and grammar");
    }
    return found;
  }
}
