package io.flinfer.runtime.grammar;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dk.brics.automaton.Automaton;
import dk.brics.automaton.RegExp;
import dk.brics.automaton.State;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.regex.Pattern;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Assume;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

/**
 * Outputs held to a GBNF grammar: against Java's matcher where the grammar is regular, against
 * counting where it nests, against Jackson where it writes JSON, and masks over a real vocabulary
 * against trying every token.
 */
class GbnfGrammarTest {
  private static final String[] LETTERS = {"a", "b", "é"};

  /**
   * A grammar's piece and the same language as an expression that both Java's matcher and the
   * automaton library read alike (no newline among the letters).
   */
  record Piece(String gbnf, String regex) {}

  @Provide
  Arbitrary<Piece> pieces() {
    return pieces(3);
  }

  private static Arbitrary<Piece> pieces(int depth) {
    Arbitrary<Piece> leaf =
        Arbitraries.of(
            new Piece("\"a\"", "a"),
            new Piece("\"b\"", "b"),
            new Piece("\"é\"", "é"),
            new Piece("\"ab\"", "ab"),
            new Piece("[ab]", "[ab]"),
            new Piece("[^a]", "[^a]"),
            new Piece("[a-b]", "[a-b]"),
            new Piece(".", "."));
    if (depth == 0) {
      return leaf;
    }
    Arbitrary<Piece> inner = pieces(depth - 1);
    Arbitrary<Piece> seq = joined(inner, " ", "");
    Arbitrary<Piece> alt = joined(inner, " | ", "|");
    Arbitrary<Piece> repeat =
        inner.flatMap(
            p ->
                Arbitraries.of("*", "+", "?", "{2}", "{1,2}", "{0,}")
                    .map(q -> new Piece("(" + p.gbnf() + ")" + q, "(" + p.regex() + ")" + q)));
    return Arbitraries.oneOf(leaf, seq, alt, repeat);
  }

  /** Two or three pieces as one group, joined by the separators given. */
  private static Arbitrary<Piece> joined(Arbitrary<Piece> inner, String inGbnf, String inRegex) {
    return inner
        .list()
        .ofMinSize(2)
        .ofMaxSize(3)
        .map(
            ps ->
                new Piece(
                    "(" + String.join(inGbnf, ps.stream().map(Piece::gbnf).toList()) + ")",
                    "(" + String.join(inRegex, ps.stream().map(Piece::regex).toList()) + ")"));
  }

  private static List<String> strings(int longest) {
    return MaskWalks.strings(LETTERS, longest);
  }

  private static OutputState after(GbnfGrammar g, String text) {
    return MaskWalks.after(g.start(), text);
  }

  /**
   * A regular grammar (its piece as root, or called from root as a rule of its own) over every
   * string of three letters up to five long: taken exactly when the automaton library's automaton
   * of the same expression can still reach a match from it, and may end exactly where Java's
   * matcher matches it.
   */
  @Property(tries = 150)
  void aRegularGrammarTakesWhatItsExpressionMatches(
      @ForAll("pieces") Piece piece, @ForAll boolean viaRule) {
    String gbnf =
        viaRule
            ? "# a rule of its own\nroot ::= body\nbody ::= " + piece.gbnf() + "\n"
            : "root ::= " + piece.gbnf();
    GbnfGrammar g;
    try {
      g = GbnfGrammar.compile(gbnf);
    } catch (IllegalArgumentException e) {
      assertThat(e).hasMessageContaining("repeats, without bound, something that can be empty");
      Assume.that(false);
      return;
    }
    Pattern java = Pattern.compile(piece.regex());
    Automaton automaton = new RegExp(piece.regex(), RegExp.NONE).toAutomaton(true);
    for (String s : strings(5)) {
      State reached = automaton.getInitialState();
      for (int i = 0; i < s.length() && reached != null; i++) {
        reached = reached.step(s.charAt(i));
      }
      OutputState state = after(g, s);
      assertThat(state != null).as("%s takes %s", gbnf, s).isEqualTo(reached != null);
      if (state != null) {
        assertThat(state.mayEnd())
            .as("%s may end after %s", gbnf, s)
            .isEqualTo(java.matcher(s).matches());
      }
    }
  }

  /**
   * Nesting: balanced brackets, taken exactly where no bracket closes more than were opened, ending
   * exactly where all are closed; complete only at the end of a grammar with nothing after.
   */
  @Test
  void nestedRulesTakeBalancedBrackets() {
    GbnfGrammar g = GbnfGrammar.compile("root ::= ( \"(\" root \")\" )*");
    List<String> all = new ArrayList<>(List.of(""));
    for (int n = 0; n < 8; n++) {
      List<String> longer = new ArrayList<>();
      for (String s : all) {
        if (s.length() == n) {
          longer.add(s + "(");
          longer.add(s + ")");
          longer.add(s + "x");
        }
      }
      all.addAll(longer);
    }
    for (String s : all) {
      int depth = 0;
      boolean ok = true;
      for (char c : s.toCharArray()) {
        depth += c == '(' ? 1 : c == ')' ? -1 : 0;
        ok &= depth >= 0 && c != 'x';
      }
      OutputState state = after(g, s);
      assertThat(state != null).as(s).isEqualTo(ok);
      if (ok) {
        assertThat(state.mayEnd()).as(s).isEqualTo(depth == 0);
        assertThat(state.isComplete()).as(s).isFalse();
      }
    }
    GbnfGrammar once = GbnfGrammar.compile("root ::= \"(\" inner \")\"\ninner ::= \"x\" | root");
    assertThat(after(once, "((x))").isComplete()).isTrue();
    assertThat(after(once, "((x)").mayEnd()).isFalse();
  }

  @Test
  void whatHasNoEndOrNoMeaningIsRefusedByName() {
    assertThatThrownBy(() -> GbnfGrammar.compile("root ::= root \"a\" | \"b\""))
        .hasMessage(
            "grammar: rule root can call itself before reading a character (left recursion)");
    assertThatThrownBy(() -> GbnfGrammar.compile("root ::= x\nx ::= \"a\"? root"))
        .hasMessageContaining("left recursion");
    assertThatThrownBy(() -> GbnfGrammar.compile("root ::= (\"a\"?)*"))
        .hasMessage("grammar: rule root repeats, without bound, something that can be empty");
    assertThatThrownBy(() -> GbnfGrammar.compile("root ::= item"))
        .hasMessage("grammar: rule root calls item, which is not defined");
    assertThatThrownBy(() -> GbnfGrammar.compile("item ::= \"a\""))
        .hasMessage("grammar: no rule root");
    assertThatThrownBy(() -> GbnfGrammar.compile("root ::= \"a\"\n\nx ::= (\"b\""))
        .hasMessageStartingWith("grammar line 3: ");
    assertThatThrownBy(() -> GbnfGrammar.compile("root ::= \"a\"{3,2}"))
        .hasMessage("grammar line 1: {3,2} counts down");
  }

  /**
   * A grammar laid out as llama.cpp's own are: a body on the line after its name, alternatives
   * after a line's last '|', groups across lines, an empty first alternative, comments.
   */
  @Test
  void aGrammarLaidOutOverLinesReads() {
    GbnfGrammar g =
        GbnfGrammar.compile(
            """
            # key-value pairs
            root ::=
              "{" ws (
                pair
                ("," ws pair)*
              )? "}"
            pair ::= [a-z]+ ":" ws number |
                [a-z]+ ":" ws "-" number
            number ::= [0-9]+
            ws ::= | " " | "\\n" [ \\t]{0,4}
            """);
    assertThat(after(g, "{}").isComplete()).isTrue();
    assertThat(after(g, "{ a: 1,\n\tb:22}").isComplete()).isTrue();
    assertThat(after(g, "{a:1,,")).isNull();
    assertThat(after(g, "{a:-1}").isComplete()).isTrue();
  }

  /** Escapes and classes: hex, UTF-16 and 32-bit escapes, negated classes, a continued line. */
  @Test
  void escapesAndClassesStandForTheirCharacters() {
    GbnfGrammar g =
        GbnfGrammar.compile(
            "root ::= \"\\x41\\u00e9\\U0001F600\" [^\\n\\]] \\\n  [\\-a-c]+ # a comment\n");
    assertThat(after(g, "Aé😀]")).isNull();
    assertThat(after(g, "Aé😀x-b").mayEnd()).isTrue();
    assertThat(after(g, "Aé😀\n")).isNull();
  }

  /**
   * Walks over the Llama 3 vocabulary held to grammars that write JSON (integers in nested arrays,
   * and an object of two fields), each token drawn from the mask: every mask equals trying every
   * token, and every walk that may end is JSON of the grammar's shape to Jackson.
   */
  @Test
  void masksAreExactAndWalksEndInWhatTheGrammarWrites() throws Exception {
    JsonVocabulary v = MaskWalks.llama3();
    Random random = new Random(11);
    List<String> grammars =
        List.of(
            "root ::= list\nlist ::= \"[\" ( item ( \", \" item )* )? \"]\"\n"
                + "item ::= \"-\"? [1-9] [0-9]{0,3} | list",
            "root ::= \"{\\\"name\\\": \\\"\" [A-Za-z ]{1,12} \"\\\", \\\"ok\\\": \" ( \"true\" |"
                + " \"false\" ) \"}\"");
    int ended = 0;
    for (String gbnf : grammars) {
      for (int walk = 0; walk < 3; walk++) {
        MaskWalks.Walk w =
            MaskWalks.walk(v, GbnfGrammar.compile(gbnf).start(), random, 40, 1, true);
        if (w.mayEnd()) {
          ended++;
          JsonNode node = new ObjectMapper().readTree(w.text());
          assertThat(node.isArray() || node.has("ok")).as(w.text()).isTrue();
        }
      }
    }
    assertThat(ended).as("walks that ended").isPositive();
  }
}
