package io.flinfer.runtime.generate;

/** Receives each generated token as soon as it is sampled. */
@FunctionalInterface
public interface TokenListener {
  void onToken(int request, int index, int token, float logprob);
}
