package io.flinfer.operators.flink;

import io.flinfer.avro.CompletionChunk;
import io.flinfer.avro.PromptLogprobs;
import io.flinfer.avro.TopLogprobs;
import io.flinfer.operators.request.RequestLimits;
import java.util.ArrayList;
import java.util.List;

/**
 * The chunks that carry a request's prompt log-probabilities: consecutive prompt tokens, a fixed
 * number per chunk, so the same request always splits alike and a consumer drops repeats by
 * (request id, index). A chunk's index is its first token's position less the prompt's length:
 * negative, and increasing up to the first text chunk's 0.
 */
public final class PromptLogprobChunks {
  /** The most prompt tokens in one chunk. */
  static final int MAX_TOKENS = 256;

  /**
   * Bytes of one prompt token in a chunk at most: its id, log-probability and rank, and 20
   * alternatives with theirs, as Avro writes them (ids as varints of up to 5 bytes), with their
   * arrays' counts.
   */
  static final int BYTES_PER_TOKEN = 5 + 4 + 5 + 20 * (5 + 4) + 8;

  private PromptLogprobChunks() {}

  /**
   * Prompt tokens per chunk under {@code limits}: as many as fit in the largest record beside the
   * request id (as key and field), the carried headers (in the value and as Kafka headers, each at
   * most the dead-letter echo bytes) and the chunk's other fields, at most {@link #MAX_TOKENS}.
   */
  public static int tokensPerChunk(RequestLimits limits) {
    long room =
        limits.maxRecordBytes()
            - 2L * limits.maxIdBytes()
            - 2L * limits.deadLetterEchoBytes()
            - 256;
    return (int) Math.max(1, Math.min(MAX_TOKENS, room / BYTES_PER_TOKEN));
  }

  /**
   * The chunks of a request's prompt log-probabilities ({@code logprobs[i]}, {@code ranks[i]}:
   * prompt token {@code i + 1}'s; {@code topIds}, {@code topLogprobs}: the same number of
   * alternatives for each).
   */
  public static List<CompletionChunk> of(
      String requestId,
      int[] promptIds,
      float[] logprobs,
      int[] ranks,
      int[] topIds,
      float[] topLogprobs,
      int tokensPerChunk) {
    int n = logprobs.length;
    if (n != promptIds.length - 1) {
      throw new IllegalArgumentException(
          n + " prompt logprobs for a prompt of " + promptIds.length + " tokens");
    }
    int k = n == 0 ? 0 : topIds.length / n;
    List<CompletionChunk> chunks = new ArrayList<>();
    for (int from = 0; from < n; from += tokensPerChunk) {
      int to = Math.min(n, from + tokensPerChunk);
      List<Integer> ids = new ArrayList<>(to - from);
      List<Float> lps = new ArrayList<>(to - from);
      List<Integer> rks = new ArrayList<>(to - from);
      List<TopLogprobs> tops = new ArrayList<>(k > 0 ? to - from : 0);
      for (int i = from; i < to; i++) {
        ids.add(promptIds[i + 1]);
        lps.add(logprobs[i]);
        rks.add(ranks[i]);
        if (k > 0) {
          tops.add(alternatives(topIds, topLogprobs, k, i));
        }
      }
      chunks.add(
          CompletionChunk.newBuilder()
              .setRequestId(requestId)
              .setIndex(from + 1 - promptIds.length)
              .setTextDelta("")
              .setPromptLogprobs(
                  PromptLogprobs.newBuilder()
                      .setFirstPosition(from + 1)
                      .setTokenIds(ids)
                      .setLogprobs(lps)
                      .setRanks(rks)
                      .setTopLogprobs(tops)
                      .build())
              .build());
    }
    return chunks;
  }

  /**
   * Token {@code i}'s {@code k} alternatives, from arrays that hold {@code k} for each token, token
   * after token.
   */
  static TopLogprobs alternatives(int[] ids, float[] logprobs, int k, int i) {
    List<Integer> altIds = new ArrayList<>(k);
    List<Float> alts = new ArrayList<>(k);
    for (int j = i * k; j < (i + 1) * k; j++) {
      altIds.add(ids[j]);
      alts.add(logprobs[j]);
    }
    return new TopLogprobs(altIds, alts);
  }
}
