package io.flinfer.job.gateway;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.flinfer.avro.CompletionChunk;
import io.flinfer.avro.PromptLogprobs;

/**
 * A request's chunks taken in token order: a repeat (the chunks topic is at-least-once) is dropped,
 * and after a gap (a retry that joined a request under way) nothing more is taken. Optionally
 * gathers the tokens' log-probabilities.
 */
final class InOrder {
  private final TokenLogprobs logprobs;
  private ObjectNode gathered;

  /** The log-probabilities of the last generated chunk taken, or null. */
  private ObjectNode last;

  private int nextToken;
  private boolean gap;

  /** The prompt's length when its log-probabilities come first (echo); else 0. */
  private final int promptLen;

  /** Whether the prompt's log-probabilities are all that is taken (no generated token). */
  private final boolean promptOnly;

  /** The next prompt position whose log-probability is awaited. */
  private int nextPrompt = 1;

  InOrder(TokenLogprobs logprobs) {
    this.logprobs = logprobs;
    this.promptLen = 0;
    this.promptOnly = false;
  }

  /**
   * Gathers the log-probabilities of the prompt {@code promptIds} first, with {@code alternatives}
   * or not: the generated tokens are taken only after all of them, and not at all with {@code
   * promptOnly}.
   */
  InOrder(TokenLogprobs logprobs, int[] promptIds, boolean alternatives, boolean promptOnly) {
    this.logprobs = logprobs;
    this.promptLen = promptIds.length;
    this.promptOnly = promptOnly;
    this.gathered = logprobs.promptStart(promptIds[0], alternatives);
  }

  /**
   * Whether {@code c} is the next one in order (then taken), rather than a repeat or past a gap.
   */
  boolean accept(CompletionChunk c) {
    if (c.getPromptLogprobs() != null) {
      return promptLen > 0 && acceptPrompt(c.getPromptLogprobs());
    }
    if (nextPrompt < promptLen) {
      gap = true; // a token before the whole prompt was seen
      return false;
    }
    if (promptOnly) {
      return false;
    }
    if (gap || c.getIndex() < nextToken) {
      return false;
    }
    if (c.getIndex() > nextToken) {
      gap = true;
      return false;
    }
    nextToken += c.getTokenIds().size();
    if (logprobs != null) {
      ObjectNode more = logprobs.of(c);
      last = more;
      if (gathered == null) {
        gathered = more;
      } else {
        TokenLogprobs.append(gathered, more);
      }
    }
    return true;
  }

  private boolean acceptPrompt(PromptLogprobs p) {
    if (gap || p.getFirstPosition() < nextPrompt) {
      return false;
    }
    if (p.getFirstPosition() > nextPrompt) {
      gap = true;
      return false;
    }
    nextPrompt += p.getTokenIds().size();
    TokenLogprobs.append(gathered, logprobs.ofPrompt(p));
    return true;
  }

  /**
   * Whether every prompt log-probability this order gathers first was taken (with echo; false
   * without).
   */
  boolean promptComplete() {
    return promptLen > 0 && !gap && nextPrompt >= promptLen;
  }

  /** The log-probabilities of the last generated chunk taken (streaming sends them with it). */
  ObjectNode lastLogprobs() {
    return last;
  }

  /** Tokens taken so far. */
  int tokens() {
    return gap ? -1 : nextToken;
  }

  /** The log-probabilities of the tokens taken, or null. */
  ObjectNode logprobs() {
    return gathered;
  }
}
