package io.flinfer.job.gateway;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.flinfer.avro.CompletionChunk;
import io.flinfer.runtime.tokenizer.Tokenizer;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * The chosen tokens' log-probabilities as OpenAI reports them: for chat, {@code {"content":
 * [{token, logprob, bytes, top_logprobs: []}]}}; for completions, {@code {"tokens",
 * "token_logprobs", "top_logprobs": null, "text_offset"}}. A token's text is its own bytes (a
 * character split across tokens shows in {@code bytes}).
 */
final class TokenLogprobs {
  private static final JsonNodeFactory JSON = JsonNodeFactory.instance;

  private final Tokenizer tokenizer;
  private final boolean chat;
  private int previous = -1;
  private int textOffset;

  TokenLogprobs(Tokenizer tokenizer, boolean chat) {
    this.tokenizer = tokenizer;
    this.chat = chat;
  }

  /** The log-probabilities of the tokens of {@code c}. */
  ObjectNode of(CompletionChunk c) {
    return of(c.getTokenIds(), c.getLogprobs());
  }

  ObjectNode of(List<Integer> tokens, List<Float> logprobs) {
    ObjectNode o = JSON.objectNode();
    ArrayNode content = chat ? o.putArray("content") : null;
    ArrayNode texts = chat ? null : o.putArray("tokens");
    ArrayNode values = chat ? null : o.putArray("token_logprobs");
    ArrayNode offsets = chat ? null : JSON.arrayNode();
    for (int i = 0; i < tokens.size(); i++) {
      int token = tokens.get(i);
      byte[] bytes = tokenizer.pieceBytes(previous, token);
      previous = token;
      String text = new String(bytes, StandardCharsets.UTF_8);
      float logprob = logprobs.get(i);
      if (chat) {
        ObjectNode t = content.addObject();
        t.put("token", text);
        t.put("logprob", logprob);
        ArrayNode b = t.putArray("bytes");
        for (byte x : bytes) {
          b.add(x & 0xff);
        }
        t.putArray("top_logprobs");
      } else {
        texts.add(text);
        values.add(logprob);
        offsets.add(textOffset);
        textOffset += text.length();
      }
    }
    if (!chat) {
      o.putNull("top_logprobs");
      o.set("text_offset", offsets);
    }
    return o;
  }

  /** Joins {@code more} (the same request's next tokens) onto {@code all}. */
  static void append(ObjectNode all, ObjectNode more) {
    more.fieldNames()
        .forEachRemaining(
            f -> {
              if (more.get(f).isArray()) {
                ((ArrayNode) all.withArray(f)).addAll((ArrayNode) more.get(f));
              } else {
                all.set(f, more.get(f));
              }
            });
  }
}
