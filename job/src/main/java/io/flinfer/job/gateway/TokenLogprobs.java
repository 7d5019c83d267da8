package io.flinfer.job.gateway;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.flinfer.avro.CompletionChunk;
import io.flinfer.avro.TopLogprobs;
import io.flinfer.runtime.tokenizer.Tokenizer;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * The chosen tokens' log-probabilities as OpenAI reports them: for chat, {@code {"content":
 * [{token, logprob, bytes, top_logprobs: [{token, logprob, bytes}]}]}}; for completions, {@code
 * {"tokens", "token_logprobs", "top_logprobs", "text_offset"}}, whose {@code top_logprobs} maps
 * each alternative's text to its log-probability (null when none were asked for; of two
 * alternatives with the same text, the likelier). A token's text is its own bytes after the token
 * chosen before it (a character split across tokens shows in {@code bytes}).
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

  /** The log-probabilities of the tokens of {@code c}, with their alternatives when it has them. */
  ObjectNode of(CompletionChunk c) {
    List<Integer> tokens = c.getTokenIds();
    List<TopLogprobs> tops = c.getTopLogprobs();
    ObjectNode o = JSON.objectNode();
    ArrayNode content = chat ? o.putArray("content") : null;
    ArrayNode texts = chat ? null : o.putArray("tokens");
    ArrayNode values = chat ? null : o.putArray("token_logprobs");
    ArrayNode alternatives = chat || tops.isEmpty() ? null : o.putArray("top_logprobs");
    ArrayNode offsets = chat ? null : JSON.arrayNode();
    for (int i = 0; i < tokens.size(); i++) {
      int token = tokens.get(i);
      byte[] bytes = tokenizer.pieceBytes(previous, token);
      float logprob = c.getLogprobs().get(i);
      TopLogprobs top = tops.isEmpty() ? null : tops.get(i);
      if (chat) {
        ObjectNode t = entry(content.addObject(), bytes, logprob);
        ArrayNode alts = t.putArray("top_logprobs");
        for (int j = 0; top != null && j < top.getTokenIds().size(); j++) {
          byte[] alt = tokenizer.pieceBytes(previous, top.getTokenIds().get(j));
          entry(alts.addObject(), alt, top.getLogprobs().get(j));
        }
      } else {
        String text = new String(bytes, StandardCharsets.UTF_8);
        texts.add(text);
        values.add(logprob);
        offsets.add(textOffset);
        textOffset += text.length();
        if (top != null) {
          ObjectNode byText = alternatives.addObject();
          for (int j = 0; j < top.getTokenIds().size(); j++) {
            String alt =
                new String(
                    tokenizer.pieceBytes(previous, top.getTokenIds().get(j)),
                    StandardCharsets.UTF_8);
            if (!byText.has(alt)) {
              byText.put(alt, top.getLogprobs().get(j));
            }
          }
        }
      }
      previous = token;
    }
    if (!chat) {
      if (alternatives == null) {
        o.putNull("top_logprobs");
      }
      o.set("text_offset", offsets);
    }
    return o;
  }

  /** Chat's form of one token: its text, log-probability and bytes. */
  private static ObjectNode entry(ObjectNode t, byte[] bytes, float logprob) {
    t.put("token", new String(bytes, StandardCharsets.UTF_8));
    t.put("logprob", logprob);
    ArrayNode b = t.putArray("bytes");
    for (byte x : bytes) {
      b.add(x & 0xff);
    }
    return t;
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
