package io.flinfer.runtime.tokenizer;

import java.util.HashMap;
import java.util.Map;

/**
 * The vocabulary's special tokens as they may appear inside text: control tokens ({@code
 * <|eot_id|>}, {@code <|im_start|>}, ...) and user-defined ones. Text is split at them, longest
 * match first, before the rest is tokenized: user-defined tokens always (they are ordinary text the
 * vocabulary added whole), control tokens only when the caller parses special tokens (a rendered
 * chat template does; a user's own text does not, so it cannot forge a turn).
 */
final class SpecialTokens {
  /** GGUF token types. */
  static final int TYPE_CONTROL = 3;

  static final int TYPE_USER_DEFINED = 4;

  /** Receives the pieces of a split text in order. */
  interface Sink {
    void text(String text);

    void token(int id);
  }

  private static final class Node {
    final Map<Character, Node> children = new HashMap<>(4);
    int id = -1;
    boolean control;
  }

  private final Node root = new Node();
  private final boolean any;

  /**
   * @param texts token texts
   * @param types GGUF token types, or null (then none is special)
   */
  SpecialTokens(String[] texts, int[] types) {
    boolean found = false;
    for (int i = 0; types != null && i < texts.length; i++) {
      if ((types[i] == TYPE_CONTROL || types[i] == TYPE_USER_DEFINED) && !texts[i].isEmpty()) {
        Node n = root;
        for (int c = 0; c < texts[i].length(); c++) {
          n = n.children.computeIfAbsent(texts[i].charAt(c), k -> new Node());
        }
        if (n.id < 0) {
          n.id = i;
          n.control = types[i] == TYPE_CONTROL;
          found = true;
        }
      }
    }
    this.any = found;
  }

  /** Splits {@code text} at special tokens into {@code sink}. */
  void split(String text, boolean parseSpecial, Sink sink) {
    if (!any) {
      sink.text(text);
      return;
    }
    int plainFrom = 0;
    int i = 0;
    while (i < text.length()) {
      int matchEnd = -1;
      int matchId = -1;
      Node n = root;
      for (int j = i; j < text.length(); j++) {
        n = n.children.get(text.charAt(j));
        if (n == null) {
          break;
        }
        if (n.id >= 0 && (parseSpecial || !n.control)) {
          matchEnd = j + 1;
          matchId = n.id;
        }
      }
      if (matchId < 0) {
        i++;
        continue;
      }
      if (i > plainFrom) {
        sink.text(text.substring(plainFrom, i));
      }
      sink.token(matchId);
      i = matchEnd;
      plainFrom = i;
    }
    if (plainFrom < text.length()) {
      sink.text(text.substring(plainFrom));
    }
  }
}
