package io.flinfer.runtime.grammar;

import static io.flinfer.runtime.grammar.JsonSchemaGrammar.ANY;
import static io.flinfer.runtime.grammar.JsonSchemaGrammar.ANY_OF;
import static io.flinfer.runtime.grammar.JsonSchemaGrammar.ARRAY;
import static io.flinfer.runtime.grammar.JsonSchemaGrammar.INTEGER;
import static io.flinfer.runtime.grammar.JsonSchemaGrammar.KEYED;
import static io.flinfer.runtime.grammar.JsonSchemaGrammar.LITERALS;
import static io.flinfer.runtime.grammar.JsonSchemaGrammar.MAP;
import static io.flinfer.runtime.grammar.JsonSchemaGrammar.NUMBER;
import static io.flinfer.runtime.grammar.JsonSchemaGrammar.OBJECT;
import static io.flinfer.runtime.grammar.JsonSchemaGrammar.STRING;
import static io.flinfer.runtime.grammar.JsonSchemaGrammar.TAGGED;

/**
 * Reads UTF-8 bytes and says whether they are still the start of one JSON value that a {@link
 * JsonSchemaGrammar} describes: a stack of frames, one per value being written (its node, a phase
 * and a counter), in fixed arrays, so that a state is copied without allocating. Lexical rules,
 * whitespace and nesting limits are {@link JsonPrefix}'s.
 */
public final class SchemaPrefix extends OutputState {
  // Phases common to every frame.
  private static final int BEFORE = 0; // before the value's first byte

  // OBJECT phases.
  private static final int OPENED = 1; // after '{' or ',': a key, or '}' where none is due
  private static final int KEY = 2; // inside key number index
  private static final int COLON = 3;
  private static final int AFTER = 4; // after a property's value (or an array item)

  // ARRAY phases (besides BEFORE and AFTER).
  private static final int FIRST = 1; // after '[': an item, or ']' where none is due
  private static final int NEXT = 5; // after ',': an item

  // STRING and number frames past BEFORE: phase INSIDE + JsonLexicon's state.
  private static final int INSIDE = 1;

  // LITERALS phase: inside the candidates.
  private static final int MATCHING = 1;

  // MAP phases besides BEFORE, OPENED, COLON, AFTER and NEXT: inside a key, plus JsonLexicon's
  // string state (whose largest values stay below this).
  private static final int MAP_KEY = 1 << 24;

  private final JsonSchemaGrammar grammar;
  private final int[] node = new int[JsonPrefix.MAX_DEPTH];
  private final int[] phase = new int[JsonPrefix.MAX_DEPTH];
  private final int[] index = new int[JsonPrefix.MAX_DEPTH]; // keys, items, characters, digits
  private final long[] magnitude = new long[JsonPrefix.MAX_DEPTH]; // a bounded integer's digits
  private final boolean[] negative = new boolean[JsonPrefix.MAX_DEPTH];
  private final int[] pattern = new int[JsonPrefix.MAX_DEPTH]; // a patterned string's state
  private final int[] character = new int[JsonPrefix.MAX_DEPTH]; // the character being read
  private final long[] used = new long[JsonPrefix.MAX_DEPTH]; // literals written: items, keys
  // A unique array's string and integer items written, and the hash of the item being written.
  private final WrittenItems[] written = new WrittenItems[JsonPrefix.MAX_DEPTH];
  private final long[] itemHash = new long[JsonPrefix.MAX_DEPTH];
  private final JsonPrefix free = new JsonPrefix(); // a free value's (one at a time: none nests)
  private int depth;
  private boolean started; // the root's first byte has come
  private long candidates; // LITERALS: the values still possible
  private int matched; // LITERALS: the value just completed
  private int position; // LITERALS and keys: bytes matched so far
  private int whitespace;

  SchemaPrefix(JsonSchemaGrammar grammar) {
    this.grammar = grammar;
    node[0] = grammar.root();
    depth = 1;
  }

  @Override
  public SchemaPrefix fresh() {
    return new SchemaPrefix(grammar);
  }

  @Override
  public void copyFrom(OutputState other) {
    SchemaPrefix o = (SchemaPrefix) other;
    depth = o.depth;
    System.arraycopy(o.node, 0, node, 0, depth);
    System.arraycopy(o.phase, 0, phase, 0, depth);
    System.arraycopy(o.index, 0, index, 0, depth);
    System.arraycopy(o.magnitude, 0, magnitude, 0, depth);
    System.arraycopy(o.negative, 0, negative, 0, depth);
    System.arraycopy(o.pattern, 0, pattern, 0, depth);
    System.arraycopy(o.character, 0, character, 0, depth);
    System.arraycopy(o.used, 0, used, 0, depth);
    if (grammar.hashesItems()) {
      System.arraycopy(o.written, 0, written, 0, depth);
      System.arraycopy(o.itemHash, 0, itemHash, 0, depth);
    }
    free.copyFrom(o.free);
    started = o.started;
    candidates = o.candidates;
    position = o.position;
    whitespace = o.whitespace;
  }

  @Override
  public boolean isComplete() {
    return depth == 0;
  }

  @Override
  int plainRoom() {
    if (depth > 0 && kind(depth - 1) == ANY && phase[depth - 1] != BEFORE) {
      return free.plainRoom();
    }
    if (depth > 0 && kind(depth - 1) == MAP && phase[depth - 1] == MAP_KEY + JsonLexicon.CHARS) {
      return Integer.MAX_VALUE; // a map's key is free text
    }
    if (depth == 0 || kind(depth - 1) != STRING || phase[depth - 1] != INSIDE + JsonLexicon.CHARS) {
      return -1;
    }
    JsonSchemaGrammar.Node n = grammar.node(node[depth - 1]);
    if (n.pattern != null) {
      return -1; // each character steps the pattern
    }
    return n.maxLength == Integer.MAX_VALUE ? n.maxLength : n.maxLength - index[depth - 1];
  }

  @Override
  StringPattern plainPattern() {
    if (depth == 0 || kind(depth - 1) != STRING || phase[depth - 1] != INSIDE + JsonLexicon.CHARS) {
      return null;
    }
    return grammar.node(node[depth - 1]).pattern;
  }

  @Override
  int patternRoom() {
    return room(depth - 1, grammar.node(node[depth - 1]));
  }

  @Override
  int patternState() {
    return pattern[depth - 1];
  }

  private int kind(int frame) {
    return grammar.node(node[frame]).kind;
  }

  @Override
  public boolean accept(byte value) {
    if (depth == 0) {
      return false;
    }
    int b = value & 0xff;
    int f = depth - 1;
    JsonSchemaGrammar.Node n = grammar.node(node[f]);
    if (phase[f] == BEFORE && n.kind != ANY_OF && JsonLexicon.isSpace(b)) {
      return space(started ? JsonPrefix.MAX_WHITESPACE : JsonPrefix.MAX_LEADING_WHITESPACE);
    }
    started = true;
    switch (n.kind) {
      case OBJECT:
      case TAGGED:
        return object(f, n, b);
      case KEYED:
        return keyed(f, n, b);
      case MAP:
        return map(f, n, b);
      case ARRAY:
        return array(f, n, b);
      case STRING:
        return string(f, n, b);
      case INTEGER:
      case NUMBER:
        return number(f, n, b);
      case LITERALS:
        return literal(f, n, b);
      case ANY:
        return free(f, n, b);
      default:
        return anyOf(f, n, b);
    }
  }

  private boolean space(int limit) {
    if (whitespace < limit) {
      whitespace++;
      return true;
    }
    return false;
  }

  private boolean object(int f, JsonSchemaGrammar.Node n, int b) {
    switch (phase[f]) {
      case BEFORE:
        return b == '{' && to(f, OPENED);
      case OPENED:
        if (JsonLexicon.isSpace(b)) {
          return space(JsonPrefix.MAX_WHITESPACE);
        }
        if (index[f] == n.keys.length) {
          return b == '}' && pop();
        }
        if (b != '"') {
          return false;
        }
        position = 1;
        return to(f, KEY);
      case KEY:
        {
          byte[] key = n.keys[index[f]];
          if (b != (key[position] & 0xff)) {
            return false;
          }
          if (++position == key.length) {
            phase[f] = COLON;
          }
          return true;
        }
      case COLON:
        if (JsonLexicon.isSpace(b)) {
          return space(JsonPrefix.MAX_WHITESPACE);
        }
        return b == ':' && to(f, AFTER) && push(n.values[index[f]]);
      default: // AFTER
        if (JsonLexicon.isSpace(b)) {
          return space(JsonPrefix.MAX_WHITESPACE);
        }
        if (index[f] + 1 < n.keys.length) {
          if (b != ',') {
            return false;
          }
          index[f]++;
          return to(f, OPENED);
        }
        return b == '}' && pop();
    }
  }

  /**
   * Objects told apart by the name of the property written first: the name, matched against each
   * object's, picks the object, which goes on after it at its colon; {@code }} is the object
   * without properties, where there is one.
   */
  private boolean keyed(int f, JsonSchemaGrammar.Node n, int b) {
    switch (phase[f]) {
      case BEFORE:
        return b == '{' && to(f, OPENED);
      case OPENED:
        if (JsonLexicon.isSpace(b)) {
          return space(JsonPrefix.MAX_WHITESPACE);
        }
        if (b == '}') {
          if (n.item < 0) {
            return false;
          }
          node[f] = n.item;
          return pop();
        }
        if (b != '"') {
          return false; // ObjectUnions makes this node only where some object has a property
        }
        candidates = n.keys.length == 64 ? -1L : (1L << n.keys.length) - 1;
        position = 1;
        return to(f, KEY);
      default: // KEY
        long still = 0;
        for (int i = 0; i < n.keys.length; i++) {
          byte[] key = n.keys[i];
          if ((candidates >>> i & 1) != 0 && (key[position] & 0xff) == b) {
            if (position + 1 == key.length) {
              // No key is the start of another as written (each ends with its quote).
              node[f] = n.tagged[i];
              index[f] = 0;
              phase[f] = COLON;
              return true;
            }
            still |= 1L << i;
          }
        }
        candidates = still;
        position++;
        return still != 0;
    }
  }

  /** An object of any keys (strings by JSON's rules), each value of the node's item schema. */
  private boolean map(int f, JsonSchemaGrammar.Node n, int b) {
    int p = phase[f];
    if (p >= MAP_KEY) {
      int next = JsonLexicon.string(p - MAP_KEY, b);
      if (next == JsonLexicon.END) {
        return to(f, COLON);
      }
      phase[f] = MAP_KEY + next;
      return next != JsonLexicon.REJECT;
    }
    switch (p) {
      case BEFORE:
        return b == '{' && to(f, OPENED);
      case OPENED:
      case NEXT:
        if (JsonLexicon.isSpace(b)) {
          return space(JsonPrefix.MAX_WHITESPACE);
        }
        if (b == '}' && p == OPENED && n.minItems == 0) {
          return pop();
        }
        if (p == OPENED && n.maxItems == 0) {
          return false;
        }
        if (n.keyNode >= 0) {
          // The key is a value of its own node; when it ends, this map reads the colon.
          phase[f] = COLON;
          return push(n.keyNode) && accept((byte) b);
        }
        return b == '"' && to(f, MAP_KEY + JsonLexicon.CHARS);
      case COLON:
        if (JsonLexicon.isSpace(b)) {
          return space(JsonPrefix.MAX_WHITESPACE);
        }
        return b == ':' && to(f, AFTER) && push(n.item);
      default: // AFTER
        if (JsonLexicon.isSpace(b)) {
          return space(JsonPrefix.MAX_WHITESPACE);
        }
        if (b == ',' && index[f] < n.maxItems) {
          return to(f, NEXT);
        }
        return b == '}' && index[f] >= n.minItems && pop();
    }
  }

  private boolean array(int f, JsonSchemaGrammar.Node n, int b) {
    switch (phase[f]) {
      case BEFORE:
        return b == '[' && to(f, FIRST);
      case FIRST:
      case NEXT:
        if (JsonLexicon.isSpace(b)) {
          return space(JsonPrefix.MAX_WHITESPACE);
        }
        if (b == ']' && phase[f] == FIRST && n.minItems == 0) {
          return pop();
        }
        if (phase[f] == FIRST && n.maxItems == 0) {
          return false;
        }
        if (n.alternatives != null) {
          // A union of arrays: the first item's first byte picks the array it is from now on.
          int picked = n.byFirstByte[b];
          if (picked < 0) {
            return false;
          }
          node[f] = n.alternatives[picked];
          n = grammar.node(node[f]);
        }
        phase[f] = AFTER;
        int i = index[f];
        return push(i < n.prefixItems.length ? n.prefixItems[i] : n.item) && accept((byte) b);
      default: // AFTER
        if (JsonLexicon.isSpace(b)) {
          return space(JsonPrefix.MAX_WHITESPACE);
        }
        if (b == ',' && index[f] < n.maxItems) {
          return to(f, NEXT);
        }
        return b == ']' && index[f] >= n.minItems && pop();
    }
  }

  private boolean string(int f, JsonSchemaGrammar.Node n, int b) {
    if (phase[f] == BEFORE) {
      if (n.pattern != null) {
        pattern[f] = n.pattern.start();
      }
      itemHash[f] = WrittenItems.EMPTY;
      return b == '"' && to(f, INSIDE + JsonLexicon.CHARS);
    }
    int state = phase[f] - INSIDE;
    if (state == JsonLexicon.CHARS && b != '"' && index[f] >= n.maxLength) {
      return false; // no room for another character
    }
    int next = JsonLexicon.string(state, b);
    if (next == JsonLexicon.END) {
      return index[f] >= n.minLength
          && (n.pattern == null || n.pattern.accepts(pattern[f]))
          && !(uniqueItem(f) && WrittenItems.contains(written[f - 1], itemHash[f]))
          && pop();
    }
    if (next == JsonLexicon.REJECT) {
      return false;
    }
    phase[f] = INSIDE + next;
    boolean unique = uniqueItem(f);
    if (n.pattern == null && !unique) {
      if (next == JsonLexicon.CHARS) {
        index[f]++; // every return to CHARS ends one character
      }
      return true; // the common case kept short: masks try it for every token
    }
    return stepCharacter(f, n, state, next, b, unique);
  }

  /**
   * A string's byte {@code b} that took it from lexical state {@code state} to {@code next}, where
   * its characters step a pattern or make an item's hash.
   */
  private boolean stepCharacter(
      int f, JsonSchemaGrammar.Node n, int state, int next, int b, boolean unique) {
    if (!(state == JsonLexicon.CHARS && b == '\\')) {
      character[f] = JsonLexicon.character(state, b, character[f]);
    }
    if (next == JsonLexicon.CHARS) {
      index[f]++; // every return to CHARS ends one character
      if (unique) {
        itemHash[f] = WrittenItems.mixCodePoint(itemHash[f], character[f]);
      }
      if (n.pattern != null) {
        pattern[f] = n.pattern.step(pattern[f], character[f]);
        return pattern[f] >= 0 && n.pattern.fewestToAccept(pattern[f]) <= room(f, n);
      }
    } else if (n.pattern != null) {
      // Inside a character: only if it can still become one the pattern takes here, with room
      // left after it for the rest of a match.
      long c = JsonLexicon.completions(next, character[f]);
      int room = room(f, n) - 1;
      return c < 0
          ? n.pattern.hasNext(pattern[f], room)
          : n.pattern.canStep(pattern[f], (int) (c >>> 32), (int) c, room);
    }
    return true;
  }

  /** The characters string frame {@code f} may still take. */
  private int room(int f, JsonSchemaGrammar.Node n) {
    return n.maxLength == Integer.MAX_VALUE ? Integer.MAX_VALUE : n.maxLength - index[f];
  }

  private boolean number(int f, JsonSchemaGrammar.Node n, int b) {
    DecimalBounds bounds = n.bounds;
    if (phase[f] == BEFORE) {
      magnitude[f] = 0;
      negative[f] = false;
      index[f] = 0;
      itemHash[f] = WrittenItems.EMPTY;
    }
    int from = phase[f] == BEFORE ? -1 : phase[f] - INSIDE;
    int next =
        from < 0 ? JsonLexicon.numberStart(b) : JsonLexicon.number(from, b, n.kind == NUMBER);
    boolean unique = uniqueItem(f);
    if (next == JsonLexicon.END) {
      if (bounds != null && !bounds.contains(negative[f], units(f, from, bounds))) {
        return false;
      }
      if (unique && WrittenItems.contains(written[f - 1], itemHash[f])) {
        return false; // written before: more digits make another
      }
      // The number ended before b: its container reads b.
      return pop() && depth > 0 && accept((byte) b);
    }
    whitespace = 0;
    phase[f] = INSIDE + next;
    if (next == JsonLexicon.REJECT) {
      return false;
    }
    if (unique && !uniqueInteger(f, b)) {
      return false;
    }
    return bounds == null || bounded(f, bounds, next, b);
  }

  /** The hash of the integer 0 (of -0 too). */
  private static final long ZERO = WrittenItems.mix(WrittenItems.EMPTY, '0');

  /**
   * Byte {@code b} of an item of a unique array of integers (a sign or a digit): the hash of its
   * digits (in {@code magnitude}, unused where integers have no bounds) and its value's (the sign
   * apart, so that -0 is 0); a leading 0 written before is refused at once, as no digit may follow.
   */
  private boolean uniqueInteger(int f, int b) {
    if (b == '-') {
      negative[f] = true;
      return true;
    }
    boolean first = magnitude[f] == 0;
    magnitude[f] = WrittenItems.mix(first ? WrittenItems.EMPTY : magnitude[f], b);
    itemHash[f] = negative[f] && magnitude[f] != ZERO ? ~magnitude[f] : magnitude[f];
    return !(first && b == '0' && WrittenItems.contains(written[f - 1], ZERO));
  }

  /**
   * A bounded number's byte {@code b}, taking it to lexical state {@code next}: its value so far
   * (the integer part in {@code magnitude} and its digits in {@code index}; after the point, the
   * value in units and the fraction digits in {@code index}'s second byte), and whether it can
   * still end within the bounds. Exponents are not written.
   */
  private boolean bounded(int f, DecimalBounds bounds, int next, int b) {
    if (b == '-') {
      negative[f] = true;
      return bounds.reachable(true, 0, 0);
    }
    if (b == '.') {
      if (bounds.fractionDigits == 0) {
        return false;
      }
      magnitude[f] = bounds.units(magnitude[f]);
      return bounds.reachableAfterPoint(negative[f], magnitude[f], 0);
    }
    if (b < '0' || b > '9') {
      return false; // an exponent
    }
    if (JsonLexicon.inFraction(next)) {
      int places = (index[f] >>> 8) + 1;
      if (places > bounds.fractionDigits) {
        return false;
      }
      index[f] += 1 << 8;
      magnitude[f] += (b - '0') * bounds.unitsAt(places);
      return bounds.reachableAfterPoint(negative[f], magnitude[f], places);
    }
    int digits = (index[f] & 0xff) + 1;
    if (digits > bounds.integerDigits) {
      return false;
    }
    index[f]++;
    magnitude[f] = magnitude[f] * 10 + (b - '0');
    return bounds.reachable(negative[f], magnitude[f], digits);
  }

  /** A bounded number's value in units, at its end (lexical state {@code state}). */
  private long units(int f, int state, DecimalBounds bounds) {
    return JsonLexicon.inFraction(state) ? magnitude[f] : bounds.units(magnitude[f]);
  }

  /** A free value (any JSON value, or any object or array): read by {@link JsonPrefix}. */
  private boolean free(int f, JsonSchemaGrammar.Node n, int b) {
    if (phase[f] == BEFORE) {
      if (n.opens != 0 && b != n.opens) {
        return false;
      }
      free.startValue();
      phase[f] = INSIDE;
    } else if (free.endsNumberAt((byte) b)) {
      // The number ended before b: its container reads b.
      return pop() && depth > 0 && accept((byte) b);
    }
    if (!free.accept((byte) b)) {
      return false;
    }
    whitespace = 0;
    return !free.isComplete() || pop();
  }

  private boolean literal(int f, JsonSchemaGrammar.Node n, int b) {
    long still = 0;
    int at = phase[f] == BEFORE ? 0 : position;
    long all = n.literals.length == 64 ? -1L : (1L << n.literals.length) - 1;
    if (f > 0 && uniqueChild(f - 1)) {
      all &= ~used[f - 1]; // an item of a unique array, a key of a map of enum keys: a new one
    }
    long from = phase[f] == BEFORE ? all : candidates;
    int complete = -1;
    for (int i = 0; i < n.literals.length; i++) {
      byte[] t = n.literals[i];
      if ((from >>> i & 1) != 0 && at < t.length && (t[at] & 0xff) == b) {
        still |= 1L << i;
        if (at + 1 == t.length) {
          complete = i;
        }
      }
    }
    if (still == 0) {
      return false;
    }
    if (complete >= 0) {
      // No value is a prefix of another (JsonSchemaGrammar checks): this one is whole.
      matched = complete;
      return pop();
    }
    candidates = still;
    position = at + 1;
    phase[f] = MATCHING;
    return true;
  }

  private boolean anyOf(int f, JsonSchemaGrammar.Node n, int b) {
    if (JsonLexicon.isSpace(b)) {
      return space(started ? JsonPrefix.MAX_WHITESPACE : JsonPrefix.MAX_LEADING_WHITESPACE);
    }
    int alternative = n.byFirstByte[b];
    if (alternative < 0) {
      return false;
    }
    node[f] = alternative;
    return accept((byte) b);
  }

  /** Moves frame {@code f} to {@code next} after a byte that is not whitespace. */
  private boolean to(int f, int next) {
    phase[f] = next;
    whitespace = 0;
    return true;
  }

  private boolean push(int child) {
    if (depth == JsonPrefix.MAX_DEPTH) {
      return false;
    }
    node[depth] = child;
    phase[depth] = BEFORE;
    index[depth] = 0;
    used[depth] = 0;
    written[depth] = null;
    depth++;
    return true;
  }

  /**
   * Whether the value being read in frame {@code f}'s child is one of literals written at most once
   * there: an item of a unique array, or a key (read before the colon) of a map of enum keys.
   */
  /** Whether frame {@code f} is a string or integer item of a unique array. */
  private boolean uniqueItem(int f) {
    return grammar.hashesItems()
        && f > 0
        && kind(f - 1) == ARRAY
        && grammar.node(node[f - 1]).uniqueItems;
  }

  private boolean uniqueChild(int f) {
    JsonSchemaGrammar.Node n = grammar.node(node[f]);
    return n.uniqueItems && (n.kind == ARRAY || phase[f] == COLON);
  }

  /** The top value is complete: its container (an array counts it) goes on. */
  private boolean pop() {
    depth--;
    whitespace = 0;
    if (depth > 0 && uniqueChild(depth - 1)) {
      int k = kind(depth);
      if (k == STRING || k == INTEGER) {
        written[depth - 1] = WrittenItems.with(written[depth - 1], itemHash[depth]);
      } else {
        used[depth - 1] |= 1L << matched; // literals: this one just matched
      }
    }
    if (depth > 0 && kind(depth - 1) == MAP && phase[depth - 1] == AFTER) {
      index[depth - 1]++; // a value: one more property
    } else if (depth > 0 && kind(depth - 1) == ARRAY) {
      index[depth - 1]++;
    } else if (depth > 0 && kind(depth - 1) == TAGGED) {
      // The first property's value picked the object: it goes on after that property.
      node[depth - 1] = grammar.node(node[depth - 1]).tagged[matched];
    }
    return true;
  }
}
