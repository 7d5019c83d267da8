package io.flinfer.job.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.flinfer.operators.request.RequestValidator;
import io.flinfer.runtime.chat.ToolCallFormat;
import io.flinfer.runtime.tokenizer.Tokenizer;
import java.util.Iterator;
import java.util.Set;
import java.util.function.Supplier;

/**
 * vLLM's {@code POST /tokenize} and {@code POST /detokenize}: a prompt, or messages rendered by the
 * model's template (with {@code tools} and {@code chat_template_kwargs}), as the very token ids the
 * job would compute (the job's own validator tokenizes it), and ids back to text. The job always
 * opens the assistant's turn and tokenizes as the model's metadata says, so {@code
 * add_generation_prompt} and {@code add_special_tokens} may only ask for that.
 */
final class TokenizeApi {
  private static final JsonNodeFactory F = JsonNodeFactory.instance;
  private static final Set<String> FIELDS =
      Set.of(
          "model",
          "prompt",
          "messages",
          "tools",
          "chat_template_kwargs",
          "add_generation_prompt",
          "add_special_tokens");

  private TokenizeApi() {}

  static ObjectNode tokenize(
      JsonNode body,
      String servedModel,
      Supplier<ToolCallFormat> format,
      RequestValidator validator,
      int contextLength)
      throws ApiError {
    if (body == null || !body.isObject()) {
      throw ApiError.badParameter("body", "must be a JSON object");
    }
    for (Iterator<String> it = body.fieldNames(); it.hasNext(); ) {
      String name = it.next();
      if (!FIELDS.contains(name)) {
        throw ApiError.unsupported(name);
      }
    }
    boolean chat = body.has("messages");
    ObjectNode request = ((ObjectNode) body).deepCopy();
    only(request, "add_generation_prompt", true, "the job always opens the assistant's turn");
    only(
        request,
        "add_special_tokens",
        !chat,
        chat
            ? "a conversation's special tokens are the template's"
            : "a prompt gets the model's BOS as its metadata says");
    OpenAiRequest parsed = OpenAiRequest.parse(request, chat, servedModel, format);
    if (parsed.choices > parsed.perPrompt) {
      throw ApiError.badParameter("prompt", "one prompt is tokenized at a time");
    }
    RequestValidator.Outcome o =
        validator.validate(parsed.record("tokenize", "", 0), System.currentTimeMillis());
    if (!o.ok()) {
      throw new ApiError(
          400, "invalid_request_error", null, o.rejection().name().toLowerCase(), o.error());
    }
    int[] ids = o.request().promptIds();
    ObjectNode out = F.objectNode();
    out.put("count", ids.length);
    out.put("max_model_len", contextLength);
    var tokens = out.putArray("tokens");
    for (int id : ids) {
      tokens.add(id);
    }
    out.putNull("token_strs");
    return out;
  }

  /** Removes {@code name}, which may only be {@code allowed} (its default). */
  private static void only(ObjectNode request, String name, boolean allowed, String why)
      throws ApiError {
    JsonNode v = request.remove(name);
    if (v != null && !v.isNull() && (!v.isBoolean() || v.asBoolean() != allowed)) {
      throw ApiError.badParameter(name, "only " + allowed + ": " + why);
    }
  }

  static ObjectNode detokenize(JsonNode body, String servedModel, Tokenizer tokenizer)
      throws ApiError {
    if (body == null || !body.isObject()) {
      throw ApiError.badParameter("body", "must be a JSON object");
    }
    for (Iterator<String> it = body.fieldNames(); it.hasNext(); ) {
      String name = it.next();
      if (!name.equals("model") && !name.equals("tokens")) {
        throw ApiError.unsupported(name);
      }
    }
    OpenAiRequest.checkModel(body, servedModel);
    JsonNode tokens = body.get("tokens");
    if (tokens == null || !tokens.isArray()) {
      throw ApiError.badParameter("tokens", "must be an array of token ids");
    }
    int[] ids = new int[tokens.size()];
    for (int i = 0; i < ids.length; i++) {
      JsonNode t = tokens.get(i);
      if (!t.canConvertToInt() || !t.isIntegralNumber()) {
        throw ApiError.badParameter("tokens[" + i + "]", "must be a token id");
      }
      ids[i] = t.intValue();
      if (ids[i] < 0 || ids[i] >= tokenizer.vocabSize()) {
        throw ApiError.badParameter(
            "tokens[" + i + "]", ids[i] + " is outside the vocabulary of " + tokenizer.vocabSize());
      }
    }
    return F.objectNode().put("prompt", tokenizer.decode(ids));
  }
}
