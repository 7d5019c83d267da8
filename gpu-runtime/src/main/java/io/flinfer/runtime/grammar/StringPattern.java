package io.flinfer.runtime.grammar;

import dk.brics.automaton.Automaton;
import dk.brics.automaton.RegExp;
import dk.brics.automaton.State;
import dk.brics.automaton.Transition;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The strings a JSON Schema's {@code pattern} (an ECMA-262 regular expression, matched anywhere in
 * the string unless anchored) and {@code format} allow, as a deterministic automaton over UTF-16
 * code units whose every state can still reach an accepting one: a string's characters step it, and
 * the string may close only in an accepting state. Immutable.
 */
final class StringPattern {
  /** The most states a pattern's automaton may have. */
  static final int MAX_STATES = 4_096;

  // Formats as whole-string expressions in the automaton library's syntax, each a subset of what
  // its RFC allows, so that a strict validator accepts every string: days that every year has
  // (no 29 February), seconds below 60 with at most 9 decimals and offsets within 18 hours
  // (java.time's limits, which validators built on it keep; not -00:00, which some refuse),
  // dot-atom local parts, host names of at most three labels (191 characters), addresses within
  // 254 under common top-level domains, http and https URIs of unreserved characters, durations of
  // days to seconds, IPv6 addresses in full.
  private static final String DATE =
      "[0-9]{4}-((0[13578]|1[02])-(0[1-9]|[12][0-9]|3[01])|(0[469]|11)-(0[1-9]|[12][0-9]|30)"
          + "|02-(0[1-9]|1[0-9]|2[0-8]))";
  private static final String TIME =
      "([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\\.[0-9]{1,9})?"
          + "(Z|\\+((0[0-9]|1[0-7]):[0-5][0-9]|18:00)|-((0[1-9]|1[0-7]):[0-5][0-9]"
          + "|00:(0[1-9]|[1-5][0-9])|18:00))";
  private static final String OCTET = "(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])";
  private static final String LABEL = "[A-Za-z0-9]([A-Za-z0-9\\-]{0,61}[A-Za-z0-9])?";
  private static final String HOST = LABEL + "(\\." + LABEL + "){0,2}";
  private static final String ATOM = "[A-Za-z0-9_%+\\-]{1,20}";
  private static final String UNRESERVED = "[A-Za-z0-9._~\\-]";
  // Validators built on Apache Commons' DomainValidator take an address's domain only under a
  // top-level domain of IANA's list: some of the common ones.
  private static final String TLD =
      "(com|org|net|edu|gov|io|ai|dev|app|co|info|biz|uk|de|fr|jp|cn|in|us|ca|au)";
  private static final String EMAIL =
      ATOM + "(\\." + ATOM + "){0,2}\\@" + LABEL + "(\\." + LABEL + ")?\\." + TLD;
  private static final String URI =
      "https?://"
          + HOST
          + "(:[1-9][0-9]{0,3})?(/"
          + UNRESERVED
          + "*)*(\\?("
          + UNRESERVED
          + "|[=&])*)?";
  private static final String DIGITS = "[0-9]{1,6}";
  // Hours, minutes and seconds in that order, each optional after the first: what RFC 3339's
  // duration grammar and java.time's Duration.parse both read.
  private static final String CLOCK =
      "T(" + DIGITS + "H(" + DIGITS + "M(" + DIGITS + "S)?)?|" + DIGITS + "M(" + DIGITS + "S)?|"
          + DIGITS + "S)";
  private static final Map<String, String> FORMATS =
      Map.ofEntries(
          Map.entry("date", DATE),
          Map.entry("time", TIME),
          Map.entry("date-time", DATE + "T" + TIME),
          Map.entry("duration", "P(" + DIGITS + "D(" + CLOCK + ")?|" + CLOCK + ")"),
          Map.entry(
              "uuid",
              "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"),
          Map.entry("ipv4", "(" + OCTET + "\\.){3}" + OCTET),
          // The full form of eight groups, which every reader takes.
          Map.entry("ipv6", "[0-9a-fA-F]{1,4}(:[0-9a-fA-F]{1,4}){7}"),
          Map.entry("email", EMAIL),
          Map.entry("idn-email", EMAIL),
          Map.entry("hostname", HOST),
          Map.entry("idn-hostname", HOST),
          Map.entry("uri", URI),
          // An absolute URI is a reference too, and an IRI of ASCII characters.
          Map.entry("uri-reference", URI),
          Map.entry("iri", URI),
          Map.entry("iri-reference", URI),
          Map.entry("json-pointer", "(/([A-Za-z0-9_.\\-]|\\~[01])*)*"),
          // OpenAPI's: base64, and formats that annotate any string (a password, raw bytes).
          Map.entry("byte", "([A-Za-z0-9+/]{4})*([A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?"),
          Map.entry("password", ".*"),
          Map.entry("binary", ".*"));

  /**
   * One kind of string the automaton takes: a {@code pattern} (null: any) and {@code format} (null:
   * any) with lengths in characters (a surrogate pair one), or one {@code literal} string.
   */
  record Part(String pattern, String format, String literal, int minLength, int maxLength) {
    static Part of(String pattern, String format, int minLength, int maxLength) {
      return new Part(pattern, format, null, minLength, maxLength);
    }

    static Part literal(String text) {
      return new Part(null, null, text, 0, Integer.MAX_VALUE);
    }

    /** What this part is, for a refusal's message. */
    String describe() {
      return literal != null
          ? "string " + literal
          : pattern != null ? "pattern " + pattern : format != null ? "format " + format : "string";
    }
  }

  private final List<Part> parts;
  private final CharDfa automaton;

  private StringPattern(List<Part> parts, CharDfa automaton) {
    this.parts = parts;
    this.automaton = automaton;
  }

  /**
   * The strings of any of {@code parts}.
   *
   * @throws IllegalArgumentException naming what cannot be turned into an automaton
   */
  static StringPattern of(List<Part> parts) {
    // Made once per list of parts: an address's automaton takes some 28 ms to build, and every
    // request with the same schema would build it again.
    synchronized (MADE) {
      StringPattern known = MADE.get(parts);
      if (known != null) {
        return known;
      }
    }
    StringPattern made = make(List.copyOf(parts));
    synchronized (MADE) {
      MADE.put(made.parts, made);
    }
    return made;
  }

  /** The parts this pattern was made of. */
  List<Part> parts() {
    return parts;
  }

  /** The most recently used patterns, at most {@link #KEPT}. */
  private static final int KEPT = 256;

  private static final Map<List<Part>, StringPattern> MADE =
      new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<List<Part>, StringPattern> eldest) {
          return size() > KEPT;
        }
      };

  private static StringPattern make(List<Part> parts) {
    Automaton a = union(parts);
    try {
      return new StringPattern(parts, CharDfa.of(a, MAX_STATES));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(describe(parts) + ": " + e.getMessage(), e);
    }
  }

  /** What {@code parts} are, for a refusal's message. */
  static String describe(List<Part> parts) {
    StringBuilder what = new StringBuilder();
    for (Part part : parts) {
      what.append(what.length() == 0 ? "" : " or ").append(part.describe());
    }
    return what.toString();
  }

  /** Whether some string is of both this pattern and {@code other}. */
  boolean overlaps(StringPattern other) {
    return automaton.intersects(other.automaton);
  }

  private static Automaton union(List<Part> parts) {
    Automaton a = Automaton.makeEmpty();
    for (Part part : parts) {
      a = a.union(automaton(part));
    }
    return a;
  }

  private static Automaton automaton(Part part) {
    Automaton a =
        part.literal != null ? Automaton.makeString(part.literal) : Automaton.makeAnyString();
    if (part.pattern != null) {
      a = a.intersection(ecma(part.pattern));
    }
    if (part.format != null) {
      String f = FORMATS.get(part.format);
      if (f == null) {
        throw new IllegalArgumentException(
            "format "
                + part.format
                + " is not supported (supported: "
                + String.join(", ", new java.util.TreeSet<>(FORMATS.keySet()))
                + ")");
      }
      a = a.intersection(new RegExp(f, RegExp.NONE).toAutomaton(false));
    }
    if (part.minLength > 0 || part.maxLength < Integer.MAX_VALUE) {
      // Counting past the cap needs more states than it allows (or matches nothing): refused
      // before the counting automaton is made.
      if (part.minLength > MAX_STATES
          || (part.maxLength < Integer.MAX_VALUE && part.maxLength > MAX_STATES)) {
        throw new IllegalArgumentException(
            part.describe()
                + ": lengths above "
                + MAX_STATES
                + " are not supported beside a pattern or format, or in a union of strings");
      }
      a = a.intersection(lengths(part.minLength, part.maxLength));
    }
    return a;
  }

  /**
   * The strings of {@code min} to {@code max} characters (unbounded at {@link Integer#MAX_VALUE}),
   * counted as JSON Schema counts them: a surrogate pair is one character, a lone surrogate one.
   */
  static Automaton lengths(int min, int max) {
    boolean bounded = max < Integer.MAX_VALUE;
    int top = bounded ? max : min; // counts past an unbounded minimum are all alike
    State[] after = new State[top + 1]; // k characters, the last not a high surrogate
    State[] high = new State[top + 1]; // k characters, the last a high surrogate
    for (int k = 0; k <= top; k++) {
      after[k] = new State();
      high[k] = new State();
      after[k].setAccept(k >= min);
      high[k].setAccept(k >= min);
    }
    for (int k = 0; k <= top; k++) {
      int next = bounded ? k + 1 : Math.min(k + 1, top);
      // A low surrogate after a high one ends the same character.
      high[k].addTransition(new Transition('\uDC00', '\uDFFF', after[k]));
      if (next > top) {
        continue;
      }
      for (State from : new State[] {after[k], high[k]}) {
        from.addTransition(new Transition('\u0000', '\uD7FF', after[next]));
        from.addTransition(new Transition('\uD800', '\uDBFF', high[next]));
        from.addTransition(new Transition('\uE000', '\uFFFF', after[next]));
      }
      after[k].addTransition(new Transition('\uDC00', '\uDFFF', after[next]));
    }
    Automaton a = new Automaton();
    a.setInitialState(after[0]);
    a.setDeterministic(true);
    return a;
  }

  int start() {
    return automaton.start();
  }

  /** The state after character {@code codePoint} (two code units above U+FFFF), or -1. */
  int step(int state, int codePoint) {
    if (codePoint < 0x10000) {
      return automaton.step(state, (char) codePoint);
    }
    int s = automaton.step(state, Character.highSurrogate(codePoint));
    return s < 0 ? -1 : automaton.step(s, Character.lowSurrogate(codePoint));
  }

  boolean accepts(int state) {
    return automaton.accepts(state);
  }

  /**
   * The fewest characters (a surrogate pair one) that take {@code state} to an accepting one: a
   * string with fewer characters left than that cannot be completed.
   */
  int fewestToAccept(int state) {
    return automaton.fewestToAccept(state);
  }

  /**
   * Whether some code unit can follow in {@code state} and leave a way to an accepting state within
   * {@code room} characters after it.
   */
  boolean hasNext(int state, int room) {
    return canStep(state, 0, 0xffff, room);
  }

  /**
   * Whether some character from {@code lowest} to {@code highest} can follow in {@code state} and
   * leave a way to an accepting state within {@code room} characters after it.
   */
  boolean canStep(int state, int lowest, int highest, int room) {
    if (lowest <= 0xffff
        && automaton.canStep(state, (char) lowest, (char) Math.min(highest, 0xffff), room)) {
      return true;
    }
    // Above U+FFFF: a high surrogate, then a low one.
    for (int cp = Math.max(lowest, 0x10000); cp <= highest; cp = (cp | 0x3ff) + 1) {
      int high = automaton.step(state, Character.highSurrogate(cp));
      int last = Math.min(highest, cp | 0x3ff);
      if (high >= 0
          && automaton.canStep(
              high, Character.lowSurrogate(cp), Character.lowSurrogate(last), room)) {
        return true;
      }
    }
    return false;
  }

  /**
   * An ECMA-262 pattern as the automaton library reads it: anchors {@code ^} and {@code $} at its
   * ends (without them it matches anywhere), the class escapes {@code \d \w \s} (and their
   * negations) spelled out, non-capturing groups as groups, lazy quantifiers as greedy ones (the
   * same strings match), and {@code .} without line terminators. Lookaround, back-references and
   * word boundaries are refused.
   */
  static Automaton ecma(String pattern) {
    StringBuilder out = new StringBuilder();
    String p = pattern;
    boolean anchoredStart = p.startsWith("^");
    if (anchoredStart) {
      p = p.substring(1);
    }
    boolean anchoredEnd = p.endsWith("$") && !p.endsWith("\\$");
    if (anchoredEnd) {
      p = p.substring(0, p.length() - 1);
    }
    boolean inClass = false;
    int negatedFrom = -1; // inside a negated class: where in out its characters begin
    for (int i = 0; i < p.length(); i++) {
      char c = p.charAt(i);
      if (c == '\\') {
        if (i + 1 == p.length()) {
          throw refused(pattern, "it ends with a lone backslash");
        }
        char e = p.charAt(++i);
        switch (e) {
          case 'd' -> out.append(inClass ? "0-9" : "[0-9]");
          case 'w' -> out.append(inClass ? "a-zA-Z0-9_" : "[a-zA-Z0-9_]");
          case 's' -> out.append(inClass ? " \t\n\r\f\u000b" : "[ \t\n\r\f\u000b]");
          case 'D', 'W', 'S' -> {
            if (inClass) {
              throw refused(pattern, "\\" + e + " inside a character class is not supported");
            }
            out.append(
                anyBut(
                    switch (e) {
                      case 'D' -> "0-9";
                      case 'W' -> "a-zA-Z0-9_";
                      default -> " \t\n\r\f\u000b";
                    }));
          }
          case 'n' -> out.append('\n');
          case 't' -> out.append('\t');
          case 'r' -> out.append('\r');
          case 'f' -> out.append('\f');
          case 'v' -> out.append('\u000b');
          case 'u' -> {
            if (i + 4 >= p.length() || !isHex(p, i + 1, 4)) {
              throw refused(pattern, "\\u needs four hex digits");
            }
            char u = (char) Integer.parseInt(p.substring(i + 1, i + 5), 16);
            out.append('\\').append(u);
            i += 4;
          }
          case 'x' -> {
            if (i + 2 >= p.length() || !isHex(p, i + 1, 2)) {
              throw refused(pattern, "\\x needs two hex digits");
            }
            out.append('\\').append((char) Integer.parseInt(p.substring(i + 1, i + 3), 16));
            i += 2;
          }
          case '0' -> out.append('\\').append('\0');
          case 'b', 'B' -> throw refused(pattern, "word boundaries are not supported");
          default -> {
            if (Character.isLetter(e) && e < 0x80) {
              // \p{...}, \c, \k<...>: meanings the automaton does not have, not the letters
              throw refused(pattern, "the escape \\" + e + " is not supported");
            }
            if (e >= '1' && e <= '9') {
              throw refused(pattern, "back-references are not supported");
            }
            out.append('\\').append(e);
          }
        }
        continue;
      }
      if (Character.isSurrogate(c)) {
        if (inClass) {
          throw refused(
              pattern, "characters above U+FFFF inside a character class are not supported");
        }
        // A character above U+FFFF is two code units: grouped, so a quantifier takes both.
        out.append('(').append(c).append(i + 1 < p.length() ? p.charAt(++i) : "").append(')');
        continue;
      }
      if (inClass) {
        if (c == ']') {
          inClass = false;
          if (negatedFrom >= 0) {
            String excluded = out.substring(negatedFrom);
            out.setLength(negatedFrom);
            out.append(anyBut(excluded));
            negatedFrom = -1;
            continue;
          }
        }
        out.append(c == '"' ? "\\\"" : String.valueOf(c));
        continue;
      }
      switch (c) {
        case '[' -> {
          inClass = true;
          if (i + 1 < p.length() && p.charAt(i + 1) == '^') {
            negatedFrom = out.length(); // what it excludes follows, made anyBut(...) at its end
            i++;
          } else {
            out.append(c);
          }
          if (i + 1 < p.length() && p.charAt(i + 1) == ']') {
            out.append("\\]"); // a ] first in a class is one of its characters
            i++;
          }
        }
        case '(' -> {
          if (p.startsWith("(?:", i)) {
            i += 2;
          } else if (p.startsWith("(?", i)) {
            throw refused(pattern, "lookaround and named groups are not supported");
          }
          out.append('(');
        }
        // An alternative may be empty ("a|" takes "" too), which the library would misread.
        case '|' -> out.append("()|()");
        case '.' -> out.append(anyBut("\n\r\u2028\u2029"));
        case '^', '$' -> throw refused(pattern, "anchors inside the pattern are not supported");
        case '*', '+', '?', '}' -> {
          out.append(c);
          if (i + 1 < p.length() && p.charAt(i + 1) == '?') {
            i++; // lazy: the same strings match
          }
        }
        case '"', '&', '~', '#', '@', '<', '>' -> out.append('\\').append(c);
        default -> out.append(c);
      }
    }
    Automaton a;
    try {
      // Not minimized: the subset construction (CharDfa) is capped; the library's is not.
      a = new RegExp("(" + out + ")", RegExp.NONE).toAutomaton(false);
    } catch (IllegalArgumentException e) {
      throw refused(pattern, e.getMessage());
    }
    // Unanchored, a pattern matches anywhere: any string (line terminators too) around it.
    if (!anchoredStart) {
      a = Automaton.makeAnyString().concatenate(a);
    }
    if (!anchoredEnd) {
      a = a.concatenate(Automaton.makeAnyString());
    }
    return a;
  }

  /** Whether {@code s} holds {@code n} hex digits from {@code from}. */
  private static boolean isHex(String s, int from, int n) {
    for (int k = from; k < from + n; k++) {
      if (Character.digit(s.charAt(k), 16) < 0) {
        return false;
      }
    }
    return true;
  }

  /**
   * One character but those of the class body {@code excluded}, in the library's syntax: a code
   * unit that is no surrogate, or a surrogate pair (a character above U+FFFF is one character, as
   * in Python's and Java's expressions and ECMA-262's with the {@code u} flag).
   */
  private static String anyBut(String excluded) {
    return "([^" + excluded + "\uD800-\uDFFF]|[\uD800-\uDBFF][\uDC00-\uDFFF])";
  }

  private static IllegalArgumentException refused(String pattern, String why) {
    return new IllegalArgumentException("pattern " + pattern + " is not supported: " + why);
  }
}
