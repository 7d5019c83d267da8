package io.flinfer.operators.engine;

/** The order in which waiting requests are considered for a prefill batch. */
public enum SchedulePolicy {
  /** Longest cached prefix first (SGLang's default): reuse what is cached before it is evicted. */
  LPM,
  /** First come, first served. */
  FCFS,
  /**
   * Depth-first over the radix tree, heavier subtrees first, so requests sharing a prefix run
   * together.
   */
  DFS_WEIGHT
}
