package io.flinfer.runtime.model;

import io.flinfer.runtime.chat.ChatTemplate;
import io.flinfer.runtime.tokenizer.Tokenizer;
import java.util.Optional;

/**
 * A loaded model: its shape, weights and tokenizer, an id naming where it came from, and its chat
 * template when the file has one ({@code tokenizer.chat_template}).
 */
public record LlamaModel(
    String id,
    ModelConfig config,
    LlamaWeights weights,
    Tokenizer tokenizer,
    Optional<ChatTemplate> chatTemplate) {

  /** A model without a chat template. */
  public LlamaModel(String id, ModelConfig config, LlamaWeights weights, Tokenizer tokenizer) {
    this(id, config, weights, tokenizer, Optional.empty());
  }
}
