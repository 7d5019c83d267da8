package io.flinfer.runtime.tokenizer;

import java.util.Arrays;

/** A growable list of ints, for token ids. */
final class IntList {
  private int[] values = new int[16];
  private int size;

  void add(int v) {
    if (size == values.length) {
      values = Arrays.copyOf(values, size * 2);
    }
    values[size++] = v;
  }

  void addAll(int[] vs) {
    for (int v : vs) {
      add(v);
    }
  }

  int[] toArray() {
    return Arrays.copyOf(values, size);
  }
}
