package io.flinfer.runtime.grammar;

import dk.brics.automaton.Automaton;
import dk.brics.automaton.State;
import dk.brics.automaton.Transition;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * A deterministic automaton over UTF-16 code units, made from a nondeterministic one by the subset
 * construction with a cap on its states, so that a pattern whose automaton would grow without bound
 * (an unanchored {@code a.{30}} needs 2^31 states) is refused instead of taking the process's time
 * and memory. Only states from which an accepting one can be reached are kept: a step that could
 * never end in a match is no step (-1). Immutable.
 */
final class CharDfa {
  private final char[] points; // the first code unit of each class of units stepped alike
  private final int[][] next; // next[state][class], or -1
  private final boolean[] accepting;
  private final int[] fewest; // fewest[state]: characters to an accepting state

  private CharDfa(char[] points, int[][] next, boolean[] accepting) {
    this.points = points;
    this.next = next;
    this.accepting = accepting;
    this.fewest = fewestToAccept();
  }

  /**
   * The deterministic form of {@code nfa}.
   *
   * @throws IllegalArgumentException when it needs more than {@code maxStates} states, or takes no
   *     string at all
   */
  static CharDfa of(Automaton nfa, int maxStates) {
    List<State> states = new ArrayList<>(nfa.getStates());
    Map<State, Integer> number = new HashMap<>();
    for (State s : states) {
      number.put(s, number.size());
    }
    TreeSet<Character> starts = new TreeSet<>();
    starts.add((char) 0);
    for (State s : states) {
      for (Transition t : s.getTransitions()) {
        starts.add(t.getMin());
        if (t.getMax() < Character.MAX_VALUE) {
          starts.add((char) (t.getMax() + 1));
        }
      }
    }
    char[] points = new char[starts.size()];
    int k = 0;
    for (char c : starts) {
      points[k++] = c;
    }
    BitSet first = new BitSet();
    first.set(number.get(nfa.getInitialState()));
    Map<BitSet, Integer> ids = new HashMap<>();
    List<BitSet> subsets = new ArrayList<>();
    List<int[]> table = new ArrayList<>();
    ids.put(first, 0);
    subsets.add(first);
    ArrayDeque<Integer> work = new ArrayDeque<>(List.of(0));
    while (!work.isEmpty()) {
      int id = work.poll();
      BitSet subset = subsets.get(id);
      int[] row = new int[points.length];
      for (int p = 0; p < points.length; p++) {
        BitSet to = new BitSet();
        for (int s = subset.nextSetBit(0); s >= 0; s = subset.nextSetBit(s + 1)) {
          for (Transition t : states.get(s).getTransitions()) {
            if (t.getMin() <= points[p] && points[p] <= t.getMax()) {
              to.set(number.get(t.getDest()));
            }
          }
        }
        if (to.isEmpty()) {
          row[p] = -1;
          continue;
        }
        Integer known = ids.get(to);
        if (known == null) {
          if (subsets.size() == maxStates) {
            throw new IllegalArgumentException(
                "its automaton needs more than " + maxStates + " states");
          }
          known = subsets.size();
          ids.put(to, known);
          subsets.add(to);
          work.add(known);
        }
        row[p] = known;
      }
      while (table.size() <= id) {
        table.add(null);
      }
      table.set(id, row);
    }
    int n = subsets.size();
    boolean[] accepting = new boolean[n];
    for (int i = 0; i < n; i++) {
      BitSet subset = subsets.get(i);
      for (int s = subset.nextSetBit(0); s >= 0; s = subset.nextSetBit(s + 1)) {
        accepting[i] |= states.get(s).isAccept();
      }
    }
    boolean[] live = live(table, accepting);
    if (!live[0]) {
      throw new IllegalArgumentException("no string matches it");
    }
    int[][] next = new int[n][];
    for (int i = 0; i < n; i++) {
      next[i] = table.get(i).clone();
      for (int p = 0; p < points.length; p++) {
        if (next[i][p] >= 0 && !live[next[i][p]]) {
          next[i][p] = -1;
        }
      }
    }
    return new CharDfa(points, next, accepting);
  }

  /** The states from which an accepting one can be reached. */
  private static boolean[] live(List<int[]> table, boolean[] accepting) {
    boolean[] live = accepting.clone();
    for (boolean changed = true; changed; ) {
      changed = false;
      for (int i = 0; i < live.length; i++) {
        if (!live[i]) {
          for (int to : table.get(i)) {
            if (to >= 0 && live[to]) {
              live[i] = true;
              changed = true;
              break;
            }
          }
        }
      }
    }
    return live;
  }

  /**
   * For each state, the fewest characters that reach an accepting one, a character being one code
   * unit or a surrogate pair (a breadth-first search back from the accepting states).
   */
  private int[] fewestToAccept() {
    int n = next.length;
    List<List<Integer>> before = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      before.add(new ArrayList<>());
    }
    for (int i = 0; i < n; i++) {
      BitSet after = new BitSet(n);
      for (int p = 0; p < points.length; p++) {
        int to = next[i][p];
        if (to < 0) {
          continue;
        }
        after.set(to);
        if (overlaps(p, '\uD800', '\uDBFF')) {
          for (int q = 0; q < points.length; q++) {
            if (next[to][q] >= 0 && overlaps(q, '\uDC00', '\uDFFF')) {
              after.set(next[to][q]);
            }
          }
        }
      }
      for (int to = after.nextSetBit(0); to >= 0; to = after.nextSetBit(to + 1)) {
        before.get(to).add(i);
      }
    }
    int[] fewest = new int[n];
    Arrays.fill(fewest, Integer.MAX_VALUE);
    ArrayDeque<Integer> work = new ArrayDeque<>();
    for (int i = 0; i < n; i++) {
      if (accepting[i]) {
        fewest[i] = 0;
        work.add(i);
      }
    }
    while (!work.isEmpty()) {
      int to = work.poll();
      for (int from : before.get(to)) {
        if (fewest[from] == Integer.MAX_VALUE) {
          fewest[from] = fewest[to] + 1;
          work.add(from);
        }
      }
    }
    return fewest;
  }

  /** Whether class {@code p}'s code units include some from {@code low} to {@code high}. */
  private boolean overlaps(int p, char low, char high) {
    int last = p + 1 < points.length ? points[p + 1] - 1 : Character.MAX_VALUE;
    return points[p] <= high && last >= low;
  }

  int start() {
    return 0;
  }

  /** The fewest characters (a surrogate pair one) that take {@code state} to an accepting one. */
  int fewestToAccept(int state) {
    return fewest[state];
  }

  /** The state after code unit {@code c}, or -1. */
  int step(int state, char c) {
    int p = Arrays.binarySearch(points, c);
    return next[state][p >= 0 ? p : -p - 2];
  }

  boolean accepts(int state) {
    return accepting[state];
  }

  /**
   * Whether some code unit from {@code lowest} to {@code highest} can follow in {@code state} to a
   * state at most {@code room} characters from an accepting one.
   */
  boolean canStep(int state, char lowest, char highest, int room) {
    int to = step(state, lowest);
    if (to >= 0 && fewest[to] <= room) {
      return true;
    }
    for (char p : points) {
      if (p > lowest && p <= highest && (to = step(state, p)) >= 0 && fewest[to] <= room) {
        return true;
      }
    }
    return false;
  }

  /**
   * Whether some string takes both this automaton and {@code other} to an accepting state: a search
   * over the pairs of states the two reach on the same code units (every state of each can still
   * reach an accepting one, so a pair is only a dead end where the two part).
   */
  boolean intersects(CharDfa other) {
    TreeSet<Character> starts = new TreeSet<>();
    for (char c : points) {
      starts.add(c);
    }
    for (char c : other.points) {
      starts.add(c);
    }
    int n = other.next.length;
    BitSet seen = new BitSet();
    ArrayDeque<Integer> work = new ArrayDeque<>(List.of(0));
    seen.set(0);
    while (!work.isEmpty()) {
      int pair = work.poll();
      int a = pair / n;
      int b = pair % n;
      if (accepting[a] && other.accepting[b]) {
        return true;
      }
      for (char c : starts) {
        int ta = step(a, c);
        int tb = ta < 0 ? -1 : other.step(b, c);
        if (tb >= 0 && !seen.get(ta * n + tb)) {
          seen.set(ta * n + tb);
          work.add(ta * n + tb);
        }
      }
    }
    return false;
  }

  int size() {
    return next.length;
  }
}
