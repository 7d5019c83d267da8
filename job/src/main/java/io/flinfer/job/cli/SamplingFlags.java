package io.flinfer.job.cli;

import io.flinfer.runtime.sampling.SamplingParams;
import picocli.CommandLine.Option;

/** How a command's tokens are drawn: the temperature and the truncations after it. */
final class SamplingFlags {
  @Option(
      names = "--temperature",
      defaultValue = "0",
      description = "0 is greedy (default: ${DEFAULT-VALUE}).")
  float temperature;

  @Option(
      names = "--top-p",
      defaultValue = "1",
      description = "Nucleus sampling mass (default: ${DEFAULT-VALUE}, off).")
  float topP;

  @Option(
      names = "--top-k",
      defaultValue = "0",
      description = "Keep the k likeliest tokens (default: ${DEFAULT-VALUE}, off).")
  int topK;

  @Option(
      names = "--min-p",
      defaultValue = "0",
      description = "Drop tokens below min-p times the likeliest (default: ${DEFAULT-VALUE}, off).")
  float minP;

  /** Sampling with these options; the command adds its seed (and any penalties) and builds. */
  SamplingParams.Builder params() {
    return SamplingParams.builder().temperature(temperature).topP(topP).topK(topK).minP(minP);
  }

  @Override
  public String toString() {
    return "temperature " + temperature + ", top_p " + topP + ", top_k " + topK + ", min_p " + minP;
  }
}
