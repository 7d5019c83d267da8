package io.flinfer.job.gateway;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.flinfer.avro.CompletionChunk;
import io.flinfer.avro.PromptLogprobs;
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
 * chosen before it (a character split across tokens shows in {@code bytes}). With completions'
 * {@code echo}, the prompt's tokens come first, its first one with null entries, as OpenAI's legacy
 * API gives them.
 */
final class TokenLogprobs {
  private static final JsonNodeFactory JSON = JsonNodeFactory.instance;

  private final Tokenizer tokenizer;
  private final boolean chat;

  /** vLLM's {@code return_tokens_as_token_ids}: each token named {@code token_id:N}. */
  private final boolean asIds;

  private int previous = -1;
  private int textOffset;

  TokenLogprobs(Tokenizer tokenizer, boolean chat) {
    this(tokenizer, chat, false);
  }

  TokenLogprobs(Tokenizer tokenizer, boolean chat, boolean asIds) {
    this.tokenizer = tokenizer;
    this.chat = chat;
    this.asIds = asIds;
  }

  private byte[] bytes(int before, int token) {
    return bytes(tokenizer, asIds, before, token);
  }

  /**
   * Token {@code token}'s bytes after {@code before}, or with {@code asIds} its id's name ({@code
   * token_id:N}).
   */
  static byte[] bytes(Tokenizer tokenizer, boolean asIds, int before, int token) {
    return asIds
        ? ("token_id:" + token).getBytes(StandardCharsets.UTF_8)
        : tokenizer.pieceBytes(before, token);
  }

  /** The log-probabilities of the tokens of {@code c}, with their alternatives when it has them. */
  ObjectNode of(CompletionChunk c) {
    return of(c.getTokenIds(), c.getLogprobs(), c.getTopLogprobs());
  }

  /**
   * Completions' {@code echo}: the prompt's first token, which has no log-probability (its entries
   * are null; {@code top_logprobs} is null too without alternatives).
   */
  ObjectNode promptStart(int first, boolean alternatives) {
    ObjectNode o = JSON.objectNode();
    String text = new String(bytes(-1, first), StandardCharsets.UTF_8);
    o.putArray("tokens").add(text);
    o.putArray("token_logprobs").addNull();
    if (alternatives) {
      o.putArray("top_logprobs").addNull();
    } else {
      o.putNull("top_logprobs");
    }
    o.putArray("text_offset").add(textOffset);
    textOffset += text.length();
    previous = first;
    return o;
  }

  /** Completions' {@code echo}: the log-probabilities of a part of the prompt. */
  ObjectNode ofPrompt(PromptLogprobs p) {
    return of(p.getTokenIds(), p.getLogprobs(), p.getTopLogprobs());
  }

  private ObjectNode of(List<Integer> tokens, List<Float> lps, List<TopLogprobs> tops) {
    ObjectNode o = JSON.objectNode();
    ArrayNode content = chat ? o.putArray("content") : null;
    ArrayNode texts = chat ? null : o.putArray("tokens");
    ArrayNode values = chat ? null : o.putArray("token_logprobs");
    ArrayNode alternatives = chat || tops.isEmpty() ? null : o.putArray("top_logprobs");
    ArrayNode offsets = chat ? null : JSON.arrayNode();
    for (int i = 0; i < tokens.size(); i++) {
      int token = tokens.get(i);
      byte[] bytes = bytes(previous, token);
      float logprob = lps.get(i);
      TopLogprobs top = tops.isEmpty() ? null : tops.get(i);
      if (chat) {
        ObjectNode t = entry(content.addObject(), bytes, logprob);
        ArrayNode alts = t.putArray("top_logprobs");
        for (int j = 0; top != null && j < top.getTokenIds().size(); j++) {
          byte[] alt = bytes(previous, top.getTokenIds().get(j));
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
                new String(bytes(previous, top.getTokenIds().get(j)), StandardCharsets.UTF_8);
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
