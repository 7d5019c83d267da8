package io.flinfer.operators.request;

import io.flinfer.avro.PromptRequest;
import io.flinfer.operators.engine.Req;

/**
 * A request that passed validation: the producer's record, its prompt tokens, its routing key and
 * the engine request built from it.
 */
public record ValidatedRequest(PromptRequest record, int[] promptIds, String routingKey, Req req) {}
