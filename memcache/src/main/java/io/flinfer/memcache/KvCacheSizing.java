package io.flinfer.memcache;

import java.util.ArrayList;
import java.util.List;

/**
 * How many KV tokens and running requests fit in a device's memory, by SGLang's {@code
 * mem_fraction_static} rule: of the memory the backend reports, everything but {@code (1 -
 * fraction) x total} may hold static state (the KV pool and the request table); the KV pool gets
 * what remains after the request table, in whole pages.
 *
 * @param maxTotalTokens usable KV slots (a multiple of the page size)
 * @param maxRunningRequests request slots
 * @param warnings explicit settings that could not be honoured, and why
 */
public record KvCacheSizing(int maxTotalTokens, int maxRunningRequests, List<String> warnings) {

  /** What to size from, with optional explicit overrides (0 = derive). */
  public record Inputs(
      long totalMemoryBytes,
      long freeMemoryBytes,
      double memFractionStatic,
      long cellSizeBytes,
      int pageSize,
      int contextLength,
      int maxTotalTokens,
      int maxRunningRequests) {}

  public static KvCacheSizing compute(Inputs in) {
    if (in.memFractionStatic() <= 0 || in.memFractionStatic() > 1) {
      throw new IllegalArgumentException(
          "mem_fraction_static must be in (0, 1]: " + in.memFractionStatic());
    }
    List<String> warnings = new ArrayList<>();
    long reserved = (long) (in.totalMemoryBytes() * (1 - in.memFractionStatic()));
    long budget = in.freeMemoryBytes() - reserved;
    long perRequestRow = 4L * in.contextLength();
    int requests = in.maxRunningRequests();
    if (requests <= 0) {
      // As SGLang: about 512 request slots per context's worth of tokens, 2048 to 4096 in all,
      // but never more than the tokens could feed.
      long tokensGuess = Math.max(0, budget / in.cellSizeBytes());
      requests =
          (int) Math.min(4096, Math.max(2048, tokensGuess / Math.max(1, in.contextLength()) * 512));
      requests = (int) Math.max(1, Math.min(requests, tokensGuess));
    }
    long kvBudget = budget - requests * perRequestRow;
    long fit = kvBudget / in.cellSizeBytes() / in.pageSize() * in.pageSize();
    if (fit < in.pageSize()) {
      throw new KvPoolSizingException(
          String.format(
              "not enough memory for the KV cache: %d bytes free of %d, %.2f may be static (%d reserved), "
                  + "%d request slots take %d, leaving %d bytes for a cell size of %d bytes per token; "
                  + "raise mem_fraction_static or free memory",
              in.freeMemoryBytes(),
              in.totalMemoryBytes(),
              in.memFractionStatic(),
              reserved,
              requests,
              requests * perRequestRow,
              kvBudget,
              in.cellSizeBytes()));
    }
    fit = Math.min(fit, Integer.MAX_VALUE / 2 / in.pageSize() * in.pageSize());
    int tokens = (int) fit;
    if (in.maxTotalTokens() > 0) {
      int asked = in.maxTotalTokens() / in.pageSize() * in.pageSize();
      if (asked > fit) {
        warnings.add(
            String.format(
                "max_total_tokens %d does not fit in memory (%d fit); using %d",
                in.maxTotalTokens(), fit, fit));
      } else {
        tokens = asked;
      }
    }
    if (tokens < in.contextLength()) {
      warnings.add(
          String.format(
              "the KV pool holds %d tokens, less than one full context of %d",
              tokens, in.contextLength()));
    }
    return new KvCacheSizing(tokens, requests, List.copyOf(warnings));
  }
}
