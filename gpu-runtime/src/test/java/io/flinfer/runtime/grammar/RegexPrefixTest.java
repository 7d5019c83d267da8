package io.flinfer.runtime.grammar;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.regex.Pattern;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Outputs held to a regular expression: a text is taken exactly when some match starts with it, the
 * output may end exactly where it matches, and masks over a real vocabulary are those of trying
 * every token.
 */
class RegexPrefixTest {
  /** One-, two- and four-byte characters (the last a surrogate pair). */
  private static final String[] LETTERS = {"a", "b", "é", "😀"};

  private static final int LONGEST = 6;

  private static List<String> strings(int longest) {
    return MaskWalks.strings(LETTERS, longest);
  }

  private static RegexPrefix after(RegexGrammar g, String text) {
    return MaskWalks.after((RegexPrefix) g.start(), text);
  }

  /**
   * Against Java's own matcher over every string of four letters up to six long (expressions whose
   * every text of up to four letters that starts a match starts one of up to six): a text of up to
   * four is taken exactly when it starts a match, may end exactly when it is one, and is complete
   * only where no longer text matches; each byte of a next character is taken where that character
   * continues a match.
   */
  @ParameterizedTest
  @ValueSource(
      strings = {
        "a+b",
        "(ab)*",
        "[ab]{2,3}",
        "é?a*",
        "😀|ab",
        ".*b",
        "[^a]+",
        "a|b|é",
        "(a|😀)b?",
        "\\w*é",
        "^(?:ba)+$",
        "b{0,2}😀?é",
        "a*(é|b)+",
        "(?:a|b)??a"
      })
  void aTextIsTakenExactlyWhenSomeMatchStartsWithIt(String regex) {
    RegexGrammar g = RegexGrammar.compile(regex);
    Pattern java = Pattern.compile(regex);
    Set<String> starts = new HashSet<>();
    Set<String> matches = new HashSet<>();
    for (String s : strings(LONGEST)) {
      if (java.matcher(s).matches()) {
        matches.add(s);
        for (int i = 0; i <= s.length(); i++) {
          starts.add(s.substring(0, i));
        }
      }
    }
    for (String s : strings(4)) {
      RegexPrefix state = after(g, s);
      assertThat(state != null).as("%s takes %s", regex, s).isEqualTo(starts.contains(s));
      if (state == null) {
        continue;
      }
      assertThat(state.mayEnd()).as("%s may end after %s", regex, s).isEqualTo(matches.contains(s));
      if (state.isComplete()) {
        assertThat(starts)
            .as("%s is complete at %s", regex, s)
            .noneMatch(t -> t.startsWith(s) && !t.equals(s));
      }
      for (String letter : LETTERS) {
        byte[] b = letter.getBytes(StandardCharsets.UTF_8);
        if (starts.contains(s + letter)) {
          RegexPrefix probe = state.fresh();
          probe.copyFrom(state);
          for (int i = 0; i < b.length; i++) {
            assertThat(probe.accept(b[i]))
                .as("%s after %s: byte %d of %s", regex, s, i, letter)
                .isTrue();
            if (i < b.length - 1) {
              assertThat(probe.mayEnd()).as("inside a character").isFalse();
            }
          }
        }
      }
    }
  }

  /** Invalid UTF-8 never follows: a lone continuation byte, an overlong form, a surrogate. */
  @Test
  void onlyValidUtf8Follows() {
    RegexGrammar any = RegexGrammar.compile("[^x]*");
    for (byte[] bad :
        new byte[][] {{(byte) 0x80}, {(byte) 0xc0, (byte) 0x80}, {(byte) 0xed, (byte) 0xa0}}) {
      RegexPrefix state = (RegexPrefix) any.start();
      assertThat(state.accept(bad, 0, bad.length)).isFalse();
    }
    assertThat(after(any, "\n\t\"\\ é😀")).isNotNull(); // raw text: quotes and controls too
  }

  @Provide
  Arbitrary<List<String>> choices() {
    return Arbitraries.strings()
        .withChars("ab.*(|)[]{}\\^$?+/é")
        .ofMaxLength(4)
        .list()
        .ofMinSize(1)
        .ofMaxSize(4);
  }

  /**
   * A choice's expression matches its texts and nothing else, however many characters in them an
   * expression reads otherwise; Java's matcher agrees.
   */
  @Property(tries = 200)
  void aChoiceMatchesExactlyItsTexts(
      @ForAll("choices") List<String> choices, @ForAll("choices") List<String> others) {
    String regex = RegexGrammar.ofChoices(choices);
    RegexGrammar g = RegexGrammar.compile(regex);
    List<String> texts = new ArrayList<>(choices);
    texts.addAll(others);
    for (String text : texts) {
      RegexPrefix state = after(g, text);
      boolean chosen = choices.contains(text);
      assertThat(state != null && state.mayEnd()).as("%s after %s", regex, text).isEqualTo(chosen);
      assertThat(Pattern.matches(regex, text)).as("Java: %s on %s", regex, text).isEqualTo(chosen);
    }
  }

  @Test
  void whatCannotBeAnAutomatonIsRefusedByName() {
    assertThatThrownBy(() -> RegexGrammar.compile("a("))
        .hasMessageStartingWith("regex a( is not a regular expression: ");
    assertThatThrownBy(() -> RegexGrammar.compile("(?=a)a"))
        .hasMessage("regex (?=a)a is not supported: lookaround and named groups are not supported");
    assertThatThrownBy(() -> RegexGrammar.compile("a\\bb"))
        .hasMessageStartingWith("regex a\\bb is not supported: word boundaries");
    assertThatThrownBy(() -> RegexGrammar.compile("a.{3000}b.{3000}"))
        .hasMessageStartingWith(
            "regex a.{3000}b.{3000}: its automaton needs more than 4096 states");
    assertThatThrownBy(() -> RegexGrammar.compile("\\p{L}+"))
        .hasMessage("regex \\p{L}+ is not supported: the escape \\p is not supported");
    assertThatThrownBy(() -> RegexGrammar.compile("\\x4"))
        .hasMessageStartingWith("regex \\x4 is not a regular expression: ");
    assertThatThrownBy(
            () ->
                StringPattern.of(
                    List.of(StringPattern.Part.of("^\\x4$", null, 0, Integer.MAX_VALUE))))
        .hasMessageEndingWith("\\x needs two hex digits");
    assertThatThrownBy(() -> RegexGrammar.ofChoices(List.of()))
        .hasMessage("a choice needs at least one text");
  }

  /** Escapes of a character by its code: hex and UTF-16, in and out of classes, and NUL. */
  @Test
  void codeEscapesStandForTheirCharacters() {
    RegexGrammar g = RegexGrammar.compile("\\x41[\\x62-\\x63]\\u00e9");
    assertThat(after(g, "Abé").mayEnd()).isTrue();
    assertThat(after(g, "Acé").mayEnd()).isTrue();
    assertThat(after(g, "x41")).isNull();
    // ECMA-262's \0 (which Java's parser, and so a regex, refuses) in a schema's pattern.
    StringPattern nul =
        StringPattern.of(List.of(StringPattern.Part.of("^a\\0$", null, 0, Integer.MAX_VALUE)));
    RegexPrefix state = new RegexPrefix(nul);
    assertThat(state.accept(new byte[] {'a', 0}, 0, 2) && state.mayEnd()).isTrue();
  }

  /** A thought first, then the match, which may itself begin with the thought's '<'. */
  @Test
  void aMatchFollowsAThoughtOrStandsAlone() {
    RegexGrammar g = RegexGrammar.compile("<b>[a-z]+</b>");
    for (String text : List.of("<b>yes</b>", "<think>hm, <b> or not</think>\n\n<b>no</b>")) {
      OutputState state = new ThinkingPrefix(g.start(), Thinking.MAY_OPEN);
      byte[] b = text.getBytes(StandardCharsets.UTF_8);
      assertThat(state.accept(b, 0, b.length)).as(text).isTrue();
      assertThat(state.isComplete()).as(text).isTrue();
    }
    OutputState fresh = new ThinkingPrefix(RegexGrammar.compile("a*").start(), Thinking.MAY_OPEN);
    assertThat(fresh.mayEnd()).as("an empty match, before any thought").isTrue();
    assertThat(fresh.accept((byte) '<')).isTrue();
    assertThat(fresh.mayEnd()).as("inside <think>").isFalse();
  }

  /**
   * Walks over the Llama 3 vocabulary, each token drawn from the mask: every mask equals trying
   * every token, and every walk that may end there is a match by Java's matcher.
   */
  @Test
  void masksAreExactAndWalksEndInMatches() throws Exception {
    JsonVocabulary v = MaskWalks.llama3();
    Random random = new Random(7);
    for (String regex :
        List.of("(yes|no), because [a-z ]{1,20}\\.", "\\d{3}-\\d{4}", "[A-Z][a-zé]+( [a-z]+)*!?")) {
      for (int walk = 0; walk < 3; walk++) {
        MaskWalks.Walk w =
            MaskWalks.walk(v, RegexGrammar.compile(regex).start(), random, 40, 4, false);
        assertThat(Pattern.matches(regex, w.text()))
            .as("%s: %s", regex, w.text())
            .isEqualTo(w.mayEnd());
      }
    }
  }
}
