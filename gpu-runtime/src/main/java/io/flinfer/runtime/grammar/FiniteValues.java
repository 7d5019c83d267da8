package io.flinfer.runtime.grammar;

import static io.flinfer.runtime.grammar.JsonSchemaGrammar.ANY_OF;
import static io.flinfer.runtime.grammar.JsonSchemaGrammar.ARRAY;
import static io.flinfer.runtime.grammar.JsonSchemaGrammar.KEYED;
import static io.flinfer.runtime.grammar.JsonSchemaGrammar.MAP;
import static io.flinfer.runtime.grammar.JsonSchemaGrammar.OBJECT;
import static io.flinfer.runtime.grammar.JsonSchemaGrammar.TAGGED;

import io.flinfer.runtime.grammar.JsonSchemaGrammar.Node;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Which nodes have a finite value. A recursion that every value must take again (an object whose
 * property is itself, an array of itself with {@code minItems}) has none: the model could begin it
 * and never end it, so such a schema is refused when it is compiled, naming the definition.
 */
final class FiniteValues {
  private FiniteValues() {}

  /**
   * Refuses the schema where a node reachable from {@code root} has no finite value.
   *
   * @throws IllegalArgumentException naming a definition without a finite value
   */
  static void check(List<Node> nodes, int root, Map<String, Integer> refs) {
    boolean[] finite = finite(nodes);
    boolean[] reached = new boolean[nodes.size()];
    ArrayDeque<Integer> work = new ArrayDeque<>(List.of(root));
    reached[root] = true;
    boolean all = true;
    while (!work.isEmpty()) {
      int id = work.poll();
      all &= finite[id];
      for (int child : children(nodes.get(id))) {
        if (child >= 0 && !reached[child]) {
          reached[child] = true;
          work.add(child);
        }
      }
    }
    if (all) {
      return;
    }
    String where = "#";
    for (Map.Entry<String, Integer> ref : new TreeMap<>(refs).entrySet()) {
      if (reached[ref.getValue()] && !finite[ref.getValue()]) {
        where = ref.getKey();
        break;
      }
    }
    throw SchemaCompiler.unsupported(
        where, "no finite value matches it: each of its values must hold another without end");
  }

  /** Whether each node has a finite value: the least fixed point of "some value's parts do". */
  private static boolean[] finite(List<Node> nodes) {
    boolean[] finite = new boolean[nodes.size()];
    for (boolean changed = true; changed; ) {
      changed = false;
      for (int id = 0; id < finite.length; id++) {
        if (!finite[id] && hasFinite(nodes.get(id), finite)) {
          finite[id] = true;
          changed = true;
        }
      }
    }
    return finite;
  }

  private static boolean hasFinite(Node n, boolean[] finite) {
    switch (n.kind) {
      case OBJECT -> {
        for (int v : n.values) {
          if (!finite[v]) {
            return false; // every property is written
          }
        }
        return true;
      }
      case ARRAY -> {
        if (n.alternatives != null) {
          return any(n.alternatives, finite); // a union of arrays
        }
        int prefix = n.prefixItems == null ? 0 : n.prefixItems.length;
        for (int i = 0; i < Math.min(prefix, n.minItems); i++) {
          if (!finite[n.prefixItems[i]]) {
            return false;
          }
        }
        return n.minItems <= prefix || n.item >= 0 && finite[n.item];
      }
      case MAP -> {
        return n.minItems == 0 || finite[n.item];
      }
      case ANY_OF, TAGGED -> {
        return any(n.kind == TAGGED ? n.tagged : n.alternatives, finite);
      }
      case KEYED -> {
        return any(n.tagged, finite) || n.item >= 0;
      }
      default -> {
        return true;
      }
    }
  }

  private static boolean any(int[] nodes, boolean[] finite) {
    for (int a : nodes == null ? new int[0] : nodes) {
      if (finite[a]) {
        return true;
      }
    }
    return false;
  }

  private static int[] children(Node n) {
    int[] own = {n.item, n.keyNode};
    int size = own.length;
    for (int[] more : new int[][] {n.values, n.prefixItems, n.alternatives, n.tagged}) {
      size += more == null ? 0 : more.length;
    }
    int[] all = new int[size];
    int k = 0;
    for (int[] more : new int[][] {own, n.values, n.prefixItems, n.alternatives, n.tagged}) {
      for (int c : more == null ? new int[0] : more) {
        all[k++] = c;
      }
    }
    return all;
  }
}
