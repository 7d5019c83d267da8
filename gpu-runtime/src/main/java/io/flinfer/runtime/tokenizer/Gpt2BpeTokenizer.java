package io.flinfer.runtime.tokenizer;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

/**
 * Byte-level BPE (GPT-2, Llama 3, Qwen): special tokens are split out, the rest is split into words
 * by the family's {@link PreTokenizer}, each word's UTF-8 bytes are mapped to printable characters,
 * and merges are applied by rank. Owns the vocabulary, the merge ranks and a cache of encoded
 * words.
 */
public final class Gpt2BpeTokenizer implements Tokenizer {

  private static final char[] BYTE_TO_CHAR = new char[256];
  private static final int[] CHAR_TO_BYTE = new int[512];

  static {
    // GPT-2's bytes_to_unicode: printable bytes map to themselves, the rest to 256 + n.
    java.util.Arrays.fill(CHAR_TO_BYTE, -1);
    int n = 0;
    for (int b = 0; b < 256; b++) {
      boolean printable =
          (b >= '!' && b <= '~') || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
      char c = printable ? (char) b : (char) (256 + n++);
      BYTE_TO_CHAR[b] = c;
      CHAR_TO_BYTE[c] = b;
    }
  }

  private final String[] tokens;
  private final byte[][] tokenBytes;
  private final boolean[] control;
  private final Map<String, Integer> tokenToId = new HashMap<>();
  private final Map<String, Integer> mergeRank = new HashMap<>();
  private final Map<String, int[]> cache = new HashMap<>();
  private final int bos;
  private final int eos;
  private final int[] endTokens;
  private final boolean addBos;
  private final PreTokenizer pre;
  private final SpecialTokens special;

  /**
   * GPT-2's pre-tokenizer.
   *
   * @param types GGUF token types, or null (all normal)
   * @param merges "left right" pairs, highest priority first
   */
  public Gpt2BpeTokenizer(
      String[] tokens, int[] types, String[] merges, int bos, int eos, boolean addBos) {
    this(
        tokens,
        types,
        merges,
        bos,
        eos,
        addBos,
        eos >= 0 ? new int[] {eos} : new int[0],
        PreTokenizer.GPT2);
  }

  /**
   * @param endTokens the tokens that end a generation (see {@link Tokenizer#endTokens})
   * @param pre how text is split into words
   */
  public Gpt2BpeTokenizer(
      String[] tokens,
      int[] types,
      String[] merges,
      int bos,
      int eos,
      boolean addBos,
      int[] endTokens,
      PreTokenizer pre) {
    this.pre = pre;
    this.special = new SpecialTokens(tokens, types);
    this.endTokens = endTokens.clone();
    this.tokens = tokens.clone();
    this.tokenBytes = new byte[tokens.length][];
    this.control = new boolean[tokens.length];
    this.bos = bos;
    this.eos = eos;
    this.addBos = addBos;
    for (int i = 0; i < tokens.length; i++) {
      control[i] = types != null && types[i] == SentencePieceTokenizer.TYPE_CONTROL;
      tokenToId.putIfAbsent(tokens[i], i);
      // An added (user-defined) token's text is its own UTF-8, not byte-level characters:
      // DeepSeek's
      // vocabularies add letters such as "ü" that would otherwise read as the byte 0xFC.
      boolean added = types != null && types[i] == SentencePieceTokenizer.TYPE_USER_DEFINED;
      tokenBytes[i] =
          control[i]
              ? new byte[0]
              : added ? tokens[i].getBytes(StandardCharsets.UTF_8) : toBytes(tokens[i]);
    }
    for (int r = 0; r < merges.length; r++) {
      mergeRank.putIfAbsent(merges[r], r);
    }
  }

  private static byte[] toBytes(String token) {
    ByteArrayOutputStream out = new ByteArrayOutputStream(token.length());
    for (int i = 0; i < token.length(); i++) {
      char c = token.charAt(i);
      int b = c < CHAR_TO_BYTE.length ? CHAR_TO_BYTE[c] : -1;
      if (b >= 0) {
        out.write(b);
      } else {
        // Not a byte-level character (an added token's literal text): its UTF-8.
        byte[] u = String.valueOf(c).getBytes(StandardCharsets.UTF_8);
        out.write(u, 0, u.length);
      }
    }
    return out.toByteArray();
  }

  @Override
  public int vocabSize() {
    return tokens.length;
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

  @Override
  public int[] encode(String text, boolean withBos, boolean parseSpecial) {
    IntList out = new IntList();
    if (withBos && bos >= 0) {
      out.add(bos);
    }
    special.split(
        text,
        parseSpecial,
        new SpecialTokens.Sink() {
          @Override
          public void text(String plain) {
            pre.split(pre.normalize(plain), word -> out.addAll(encodeWord(word)));
          }

          @Override
          public void token(int id) {
            out.add(id);
          }
        });
    return out.toArray();
  }

  /** A word's tokens: its bytes as byte-level characters, merged by rank. */
  private int[] encodeWord(String word) {
    int[] cached = cache.get(word);
    if (cached != null) {
      return cached;
    }
    byte[] bytes = word.getBytes(StandardCharsets.UTF_8);
    StringBuilder mapped = new StringBuilder(bytes.length);
    for (byte b : bytes) {
      mapped.append(BYTE_TO_CHAR[b & 0xff]);
    }
    int[] result;
    Integer whole = pre.wholeWordsFirst() ? tokenToId.get(mapped.toString()) : null;
    if (whole != null) {
      result = new int[] {whole};
    } else {
      result = merge(mapped.toString());
    }
    if (cache.size() < 100_000) {
      cache.put(word, result);
    }
    return result;
  }

  /** Merges by rank; a symbol no merge made is its byte-level characters' tokens. */
  private int[] merge(String word) {
    IntList ids = new IntList();
    for (String sym :
        PairMerger.merge(
            word,
            false,
            (left, right) -> {
              Integer r = mergeRank.get(left + " " + right);
              return r == null ? Double.NaN : r;
            })) {
      Integer id = tokenToId.get(sym);
      if (id != null) {
        ids.add(id);
        continue;
      }
      for (int k = 0; k < sym.length(); k++) {
        Integer c = tokenToId.get(String.valueOf(sym.charAt(k)));
        if (c == null) {
          throw new IllegalArgumentException(
              "the vocabulary has no token for byte 0x"
                  + Integer.toHexString(CHAR_TO_BYTE[sym.charAt(k)]));
        }
        ids.add(c);
      }
    }
    return ids.toArray();
  }

  @Override
  public byte[] pieceBytes(int previous, int token) {
    return tokenBytes[token];
  }
}
