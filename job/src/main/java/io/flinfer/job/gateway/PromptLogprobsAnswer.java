package io.flinfer.job.gateway;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.flinfer.avro.CompletionChunk;
import io.flinfer.avro.PromptLogprobs;
import io.flinfer.avro.TopLogprobs;
import io.flinfer.runtime.tokenizer.Tokenizer;
import java.nio.charset.StandardCharsets;

/**
 * vLLM's {@code prompt_logprobs} answer, gathered from a request's chunks of prompt
 * log-probabilities: one entry per prompt token, null for the first, else an object keyed by token
 * id holding the prompt token and its position's most likely tokens, each with its {@code logprob},
 * {@code rank} and {@code decoded_token} (its text after the prompt token before it).
 */
final class PromptLogprobsAnswer {
  private static final JsonNodeFactory JSON = JsonNodeFactory.instance;

  private final Tokenizer tokenizer;
  private final boolean asIds;
  private final ArrayNode entries = JSON.arrayNode().addNull();
  private int next = 1;
  private int previous = -1;

  PromptLogprobsAnswer(Tokenizer tokenizer, boolean asIds) {
    this.tokenizer = tokenizer;
    this.asIds = asIds;
  }

  /**
   * Takes {@code c} if it holds the next prompt tokens' log-probabilities (repeats are dropped).
   */
  void accept(CompletionChunk c) {
    PromptLogprobs p = c.getPromptLogprobs();
    if (p == null || p.getFirstPosition() != next) {
      return;
    }
    for (int i = 0; i < p.getTokenIds().size(); i++) {
      int token = p.getTokenIds().get(i);
      ObjectNode entry = entries.addObject();
      TopLogprobs top = p.getTopLogprobs().isEmpty() ? null : p.getTopLogprobs().get(i);
      for (int j = 0; top != null && j < top.getTokenIds().size(); j++) {
        put(entry, top.getTokenIds().get(j), top.getLogprobs().get(j), j + 1);
      }
      int rank = p.getRanks().isEmpty() ? 0 : p.getRanks().get(i);
      put(entry, token, p.getLogprobs().get(i), rank);
      previous = token;
    }
    next += p.getTokenIds().size();
  }

  private void put(ObjectNode entry, int token, float logprob, int rank) {
    String key = Integer.toString(token);
    if (entry.has(key)) {
      return; // the prompt token among its alternatives
    }
    ObjectNode o = entry.putObject(key);
    o.put("logprob", logprob);
    if (rank > 0) {
      o.put("rank", rank);
    }
    byte[] bytes = TokenLogprobs.bytes(tokenizer, asIds, previous, token);
    o.put("decoded_token", new String(bytes, StandardCharsets.UTF_8));
  }

  /** The entries, when the whole prompt of {@code promptTokens} tokens was seen; else null. */
  ArrayNode of(int promptTokens) {
    return next == promptTokens ? entries : null;
  }
}
