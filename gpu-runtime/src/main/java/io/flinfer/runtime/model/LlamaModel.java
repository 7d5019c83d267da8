package io.flinfer.runtime.model;

import io.flinfer.runtime.tokenizer.Tokenizer;

/** A loaded model: its shape, weights and tokenizer, and an id naming where it came from. */
public record LlamaModel(
    String id, ModelConfig config, LlamaWeights weights, Tokenizer tokenizer) {}
