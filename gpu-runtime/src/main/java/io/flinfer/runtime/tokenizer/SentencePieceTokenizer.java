package io.flinfer.runtime.tokenizer;

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * SentencePiece-style BPE with byte fallback (llama2.c {@code tokenizer.bin} and GGUF {@code llama}
 * vocabularies). Owns the pieces, their scores and the byte-fallback ids.
 *
 * <p>Encoding prepends the dummy-prefix space, starts from single characters and repeatedly merges
 * the adjacent pair whose concatenation is the highest-scoring piece (leftmost on ties); characters
 * left without a piece become their UTF-8 bytes' {@code <0xHH>} tokens.
 */
public final class SentencePieceTokenizer implements Tokenizer {
  /** GGUF token types. */
  public static final int TYPE_NORMAL = 1;

  public static final int TYPE_CONTROL = 3;
  public static final int TYPE_USER_DEFINED = 4;
  public static final int TYPE_BYTE = 6;

  private final String[] pieces;
  private final byte[][] pieceBytes;
  private final float[] scores;
  private final boolean[] control;
  private final int[] byteToken = new int[256];
  private final Map<String, Integer> pieceToId = new HashMap<>();
  private final int bos;
  private final int eos;
  private final int[] endTokens;
  private final boolean addBos;
  private final boolean addSpacePrefix;
  private final SpecialTokens special;

  /**
   * @param pieces token texts; SentencePiece's {@code ▁} and a plain space both mean space
   * @param types GGUF token types, or null to infer (ids {@code bos}, {@code eos}, 0 control;
   *     {@code <0xHH>} pieces bytes)
   */
  public SentencePieceTokenizer(
      String[] pieces,
      float[] scores,
      int[] types,
      int bos,
      int eos,
      boolean addBos,
      boolean addSpacePrefix) {
    this(
        pieces,
        scores,
        types,
        bos,
        eos,
        addBos,
        addSpacePrefix,
        eos >= 0 ? new int[] {eos} : new int[0]);
  }

  /**
   * @param endTokens the tokens that end a generation (see {@link Tokenizer#endTokens})
   */
  public SentencePieceTokenizer(
      String[] pieces,
      float[] scores,
      int[] types,
      int bos,
      int eos,
      boolean addBos,
      boolean addSpacePrefix,
      int[] endTokens) {
    int n = pieces.length;
    this.endTokens = endTokens.clone();
    this.pieces = new String[n];
    this.pieceBytes = new byte[n][];
    this.scores = scores.clone();
    this.control = new boolean[n];
    this.bos = bos;
    this.eos = eos;
    this.addBos = addBos;
    this.addSpacePrefix = addSpacePrefix;
    this.special = new SpecialTokens(pieces, types);
    java.util.Arrays.fill(byteToken, -1);
    for (int i = 0; i < n; i++) {
      String p = pieces[i].replace('\u2581', ' ');
      this.pieces[i] = p;
      int byteValue = byteValue(p);
      boolean isByte = types != null ? types[i] == TYPE_BYTE : byteValue >= 0;
      boolean isControl =
          types != null ? types[i] == TYPE_CONTROL : (i == bos || i == eos || i == 0);
      control[i] = isControl;
      if (isByte && byteValue >= 0) {
        byteToken[byteValue] = i;
        pieceBytes[i] = new byte[] {(byte) byteValue};
      } else if (isControl) {
        pieceBytes[i] = new byte[0];
      } else {
        pieceBytes[i] = p.getBytes(StandardCharsets.UTF_8);
        pieceToId.putIfAbsent(p, i);
      }
    }
  }

  private static int byteValue(String p) {
    if (p.length() == 6 && p.startsWith("<0x") && p.endsWith(">")) {
      try {
        return Integer.parseInt(p.substring(3, 5), 16);
      } catch (NumberFormatException e) {
        return -1;
      }
    }
    return -1;
  }

  @Override
  public int vocabSize() {
    return pieces.length;
  }

  @Override
  public int bosId() {
    return bos;
  }

  @Override
  public int eosId() {
    return eos;
  }

  @Override
  public int[] endTokens() {
    return endTokens.clone();
  }

  @Override
  public boolean addBos() {
    return addBos;
  }

  /** The merge score of {@code id}. */
  public float score(int id) {
    return scores[id];
  }

  /** The piece text of {@code id}, with spaces for {@code ▁}. */
  public String piece(int id) {
    return pieces[id];
  }

  @Override
  public int[] encode(String text, boolean withBos, boolean parseSpecial) {
    IntList out = new IntList();
    if (withBos && bos >= 0) {
      out.add(bos);
    }
    // As llama.cpp: the dummy-prefix space goes before the text and after each special token.
    boolean[] afterSpecial = {true};
    special.split(
        text,
        parseSpecial,
        new SpecialTokens.Sink() {
          @Override
          public void text(String plain) {
            bpe(addSpacePrefix && afterSpecial[0] ? " " + plain : plain, out);
            afterSpecial[0] = false;
          }

          @Override
          public void token(int id) {
            out.add(id);
            afterSpecial[0] = true;
          }
        });
    return out.toArray();
  }

  /** Merges by piece score, highest first; what no piece covers falls back to byte tokens. */
  private void bpe(String s, IntList out) {
    List<String> symbols =
        PairMerger.merge(
            s,
            true,
            (left, right) -> {
              Integer id = pieceToId.get(left + right);
              return id == null ? Double.NaN : -scores[id];
            });
    for (String sym : symbols) {
      Integer id = pieceToId.get(sym);
      if (id != null) {
        out.add(id);
      } else {
        for (byte b : sym.getBytes(StandardCharsets.UTF_8)) {
          int t = byteToken[b & 0xff];
          if (t < 0) {
            throw new IllegalArgumentException(
                "'"
                    + sym
                    + "' has no token and the vocabulary no byte fallback for 0x"
                    + Integer.toHexString(b & 0xff));
          }
          out.add(t);
        }
      }
    }
  }

  @Override
  public byte[] pieceBytes(int previous, int token) {
    byte[] b = pieceBytes[token];
    // The dummy-prefix space of the first word is not part of the text.
    if (addSpacePrefix
        && (previous < 0 || previous == bos)
        && b.length > 0
        && b[0] == ' '
        && !isByteToken(token)) {
      return java.util.Arrays.copyOfRange(b, 1, b.length);
    }
    return b;
  }

  private boolean isByteToken(int token) {
    return pieceBytes[token].length == 1 && byteToken[pieceBytes[token][0] & 0xff] == token;
  }

  public boolean isControl(int token) {
    return control[token];
  }
}
