package io.flinfer.runtime.grammar;

import io.flinfer.runtime.grammar.GbnfParser.Alt;
import io.flinfer.runtime.grammar.GbnfParser.Chars;
import io.flinfer.runtime.grammar.GbnfParser.Node;
import io.flinfer.runtime.grammar.GbnfParser.Ref;
import io.flinfer.runtime.grammar.GbnfParser.Repeat;
import io.flinfer.runtime.grammar.GbnfParser.Seq;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * An output that a context-free grammar (GBNF, {@link GbnfParser}) derives from its {@code root}
 * rule, as SGLang's {@code ebnf} and vLLM's {@code grammar} ask. Its rules are flattened into one
 * array of elements, each alternative a run of character sets and rule calls closed by an end, so
 * that a position in the grammar is one int; repetitions become rules that call themselves last
 * (which {@link GbnfPrefix} runs without growing its stacks). A grammar whose rule can call itself
 * before reading a character (left recursion), or that repeats what can be empty without bound, is
 * refused, as it would have no end. Immutable.
 */
public final class GbnfGrammar {
  static final int CHARS = 0;
  static final int CALL = 1;
  static final int END = 2;

  /** Each element's kind, and its argument: a character set's index, or a called rule. */
  final int[] kind;

  final int[] arg;
  final int[][] sets;

  /** Each rule's alternatives' first elements. */
  final int[][] alternatives;

  final int root;

  private GbnfGrammar(Builder b) {
    kind = b.kind.stream().mapToInt(Integer::intValue).toArray();
    arg = b.arg.stream().mapToInt(Integer::intValue).toArray();
    sets = b.sets.toArray(int[][]::new);
    alternatives = new int[b.alternatives.size()][];
    for (int r = 0; r < alternatives.length; r++) {
      alternatives[r] = b.alternatives.get(r).stream().mapToInt(Integer::intValue).toArray();
    }
    root = b.ruleIds.get("root");
  }

  /**
   * Compiles {@code gbnf}.
   *
   * @throws IllegalArgumentException naming what is wrong: syntax, an undefined rule, no root, left
   *     recursion, an unbounded repetition of what can be empty
   */
  public static GbnfGrammar compile(String gbnf) {
    Map<String, Node> rules = GbnfParser.parse(gbnf);
    if (!rules.containsKey("root")) {
      throw new IllegalArgumentException("grammar: no rule root");
    }
    Builder b = new Builder(rules);
    b.build();
    GbnfGrammar g = new GbnfGrammar(b);
    new Termination(g, b.names).check();
    return g;
  }

  /** The state before the output's first byte, with its own table of stacks. */
  public OutputState start() {
    return new GbnfPrefix(this, new GbnfStacks());
  }

  /** Flattens rule trees into elements. */
  private static final class Builder {
    final Map<String, Integer> ruleIds = new HashMap<>();
    final List<String> names = new ArrayList<>();
    final List<Integer> kind = new ArrayList<>();
    final List<Integer> arg = new ArrayList<>();
    final List<int[]> sets = new ArrayList<>();
    final List<List<Integer>> alternatives = new ArrayList<>();
    // Rules whose elements are still to be written, with their trees.
    final List<Node> pending = new ArrayList<>();

    Builder(Map<String, Node> rules) {
      rules.forEach(this::rule);
    }

    private int rule(String name, Node body) {
      int id = names.size();
      names.add(name);
      alternatives.add(new ArrayList<>());
      pending.add(body);
      ruleIds.put(name, id); // names are distinct: the parser's, and numbered anonymous ones
      return id;
    }

    /** A rule for a piece of {@code within}, named after it. */
    private int anonymous(String within, Node body) {
      return rule(within + "#" + names.size(), body);
    }

    void build() {
      for (int r = 0; r < pending.size(); r++) {
        Node body = pending.get(r);
        List<Node> options = body instanceof Alt a ? a.options() : List.of(body);
        for (Node option : options) {
          alternatives.get(r).add(kind.size());
          List<Node> items = option instanceof Seq s ? s.items() : List.of(option);
          for (Node item : items) {
            element(names.get(r), item);
          }
          add(END, 0);
        }
      }
    }

    private void element(String within, Node item) {
      if (item instanceof Chars c) {
        sets.add(c.ranges());
        add(CHARS, sets.size() - 1);
      } else if (item instanceof Ref ref) {
        Integer id = ruleIds.get(ref.name());
        if (id == null) {
          throw new IllegalArgumentException(
              "grammar: rule "
                  + within.replaceAll("#.*", "")
                  + " calls "
                  + ref.name()
                  + ", which is not defined");
        }
        add(CALL, id);
      } else if (item instanceof Seq s) {
        for (Node part : s.items()) {
          element(within, part);
        }
      } else if (item instanceof Alt) {
        add(CALL, anonymous(within, item));
      } else if (item instanceof Repeat rep) {
        for (int k = 0; k < rep.min(); k++) {
          element(within, rep.item());
        }
        if (rep.max() == -1) {
          // star ::= item star | (nothing): calls itself last
          int star = anonymous(within, null);
          Node again = new Seq(List.of(rep.item(), new Ref(names.get(star))));
          pending.set(star, new Alt(List.of(again, new Seq(List.of()))));
          add(CALL, star);
        } else if (rep.max() > rep.min()) {
          // up to n more: opt_n ::= item opt_(n-1) | (nothing)
          int previous = -1;
          for (int k = 0; k < rep.max() - rep.min(); k++) {
            int opt = anonymous(within, null);
            List<Node> more = new ArrayList<>(List.of(rep.item()));
            if (previous >= 0) {
              more.add(new Ref(names.get(previous)));
            }
            pending.set(opt, new Alt(List.of(new Seq(more), new Seq(List.of()))));
            previous = opt;
          }
          add(CALL, previous);
        }
      }
    }

    private void add(int k, int a) {
      kind.add(k);
      arg.add(a);
    }
  }

  /** Refuses left recursion and unbounded repetitions of what can be empty. */
  private static final class Termination {
    private final GbnfGrammar g;
    private final List<String> names;
    private final boolean[] nullable;

    Termination(GbnfGrammar g, List<String> names) {
      this.g = g;
      this.names = names;
      this.nullable = new boolean[g.alternatives.length];
    }

    void check() {
      for (boolean changed = true; changed; ) {
        changed = false;
        for (int r = 0; r < nullable.length; r++) {
          if (!nullable[r] && anyAlternativeEmpty(r)) {
            nullable[r] = changed = true;
          }
        }
      }
      int[] mark = new int[nullable.length]; // 0 unseen, 1 on the path, 2 done
      for (int r = 0; r < nullable.length; r++) {
        visit(r, mark);
      }
    }

    private boolean anyAlternativeEmpty(int r) {
      for (int p : g.alternatives[r]) {
        boolean empty = true;
        for (; g.kind[p] != END && empty; p++) {
          empty = g.kind[p] == CALL && nullable[g.arg[p]];
        }
        if (empty) {
          return true;
        }
      }
      return false;
    }

    /** Depth-first over the calls a rule makes before reading a character. */
    private void visit(int r, int[] mark) {
      if (mark[r] == 2) {
        return;
      }
      if (mark[r] == 1) {
        String name = names.get(r);
        throw new IllegalArgumentException(
            name.contains("#")
                ? "grammar: rule "
                    + name.replaceAll("#.*", "")
                    + " repeats, without bound, something that can be empty"
                : "grammar: rule "
                    + name
                    + " can call itself before reading a character (left"
                    + " recursion)");
      }
      mark[r] = 1;
      for (int p : g.alternatives[r]) {
        for (; g.kind[p] == CALL; p++) {
          visit(g.arg[p], mark);
          if (!nullable[g.arg[p]]) {
            break;
          }
        }
      }
      mark[r] = 2;
    }
  }
}
