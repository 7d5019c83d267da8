package io.flinfer.job.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import io.flinfer.avro.PromptRequest;
import io.flinfer.runtime.grammar.RegexGrammar;
import io.flinfer.runtime.grammar.ResponseFormat;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * The servers' own parameters for output that a regular expression or a choice of texts holds, into
 * a record's {@code response_format} regex: SGLang's {@code regex}, vLLM's {@code
 * structured_outputs} ({@code regex} or {@code choice}) and its older {@code guided_regex} and
 * {@code guided_choice}. At most one of them, and not beside a JSON {@code response_format}.
 */
final class RegexOutput {
  /** The body's parameters this reads. */
  static final Set<String> PARAMETERS =
      Set.of("regex", "guided_regex", "guided_choice", "structured_outputs");

  private RegexOutput() {}

  /** Sets {@code r}'s regex from {@code body}'s parameters, if it has one. */
  static void read(JsonNode body, PromptRequest.Builder r) throws ApiError {
    String param = null;
    String regex = null;
    for (String name : List.of("regex", "guided_regex", "guided_choice", "structured_outputs")) {
      JsonNode v = body.get(name);
      if (v == null || v.isNull()) {
        continue;
      }
      if (param != null) {
        throw ApiError.badParameter(name, "cannot be given with " + param);
      }
      param = name;
      regex =
          switch (name) {
            case "guided_choice" -> choices(name, v);
            case "structured_outputs" -> structured(v);
            default -> text(name, v);
          };
    }
    if (regex == null) {
      return;
    }
    String format = r.getResponseFormat(); // null where the body gave none
    if (format != null && !ResponseFormat.TEXT.wireName().equals(format)) {
      throw ApiError.badParameter(param, "cannot be given with a JSON response_format");
    }
    try {
      RegexGrammar.compile(regex);
    } catch (IllegalArgumentException e) {
      throw ApiError.badParameter(param, e.getMessage());
    }
    r.setResponseFormat(ResponseFormat.REGEX.wireName());
    r.setRegex(regex);
  }

  private static String text(String name, JsonNode v) throws ApiError {
    if (!v.isTextual()) {
      throw ApiError.badParameter(name, "must be a string");
    }
    return v.asText();
  }

  /** A choice of texts as the regex that matches exactly them. */
  private static String choices(String name, JsonNode v) throws ApiError {
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
    return RegexGrammar.ofChoices(texts);
  }

  /** vLLM's {@code structured_outputs}: one of {@code regex} and {@code choice}. */
  private static String structured(JsonNode v) throws ApiError {
    if (!v.isObject()) {
      throw ApiError.badParameter("structured_outputs", "must be an object");
    }
    String found = null;
    String regex = null;
    for (var it = v.fields(); it.hasNext(); ) {
      var member = it.next();
      if (member.getValue().isNull()) {
        continue;
      }
      String name = "structured_outputs." + member.getKey();
      if (found != null) {
        throw ApiError.badParameter(name, "cannot be given with " + found);
      }
      found = name;
      regex =
          switch (member.getKey()) {
            case "regex" -> text(name, member.getValue());
            case "choice" -> choices(name, member.getValue());
            default ->
                throw ApiError.badParameter(
                    name, "is not supported: give regex or choice here, JSON by response_format");
          };
    }
    if (regex == null) {
      throw ApiError.badParameter("structured_outputs", "must give regex or choice");
    }
    return regex;
  }
}
