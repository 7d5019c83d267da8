package io.flinfer.runtime.tokenizer;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * GPT-2 style byte-level BPE: text is split by the GPT-2 pre-tokenizer pattern, each piece's UTF-8
 * bytes are mapped to printable characters, and merges are applied by rank. Owns the vocabulary,
 * the merge ranks and a cache of encoded words.
 */
public final class Gpt2BpeTokenizer implements Tokenizer {
  private static final Pattern PRE_TOKENIZER =
      Pattern.compile(
          "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+",
          Pattern.UNICODE_CHARACTER_CLASS);

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

  /**
   * @param types GGUF token types, or null (all normal)
   * @param merges "left right" pairs, highest priority first
   */
  public Gpt2BpeTokenizer(
      String[] tokens, int[] types, String[] merges, int bos, int eos, boolean addBos) {
    this(tokens, types, merges, bos, eos, addBos, eos >= 0 ? new int[] {eos} : new int[0]);
  }

  /**
   * @param endTokens the tokens that end a generation (see {@link Tokenizer#endTokens})
   */
  public Gpt2BpeTokenizer(
      String[] tokens,
      int[] types,
      String[] merges,
      int bos,
      int eos,
      boolean addBos,
      int[] endTokens) {
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
      tokenBytes[i] = control[i] ? new byte[0] : toBytes(tokens[i]);
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
  public int[] encode(String text, boolean withBos) {
    List<Integer> out = new ArrayList<>();
    if (withBos && bos >= 0) {
      out.add(bos);
    }
    Matcher m = PRE_TOKENIZER.matcher(text);
    while (m.find()) {
      for (int id : encodeWord(m.group())) {
        out.add(id);
      }
    }
    int[] ids = new int[out.size()];
    for (int i = 0; i < ids.length; i++) {
      ids[i] = out.get(i);
    }
    return ids;
  }

  private int[] encodeWord(String word) {
    int[] cached = cache.get(word);
    if (cached != null) {
      return cached;
    }
    byte[] bytes = word.getBytes(StandardCharsets.UTF_8);
    List<String> symbols = new ArrayList<>(bytes.length);
    for (byte b : bytes) {
      symbols.add(String.valueOf(BYTE_TO_CHAR[b & 0xff]));
    }
    while (symbols.size() > 1) {
      int bestRank = Integer.MAX_VALUE;
      int best = -1;
      for (int i = 0; i + 1 < symbols.size(); i++) {
        Integer r = mergeRank.get(symbols.get(i) + " " + symbols.get(i + 1));
        if (r != null && r < bestRank) {
          bestRank = r;
          best = i;
        }
      }
      if (best < 0) {
        break;
      }
      String left = symbols.get(best);
      String right = symbols.get(best + 1);
      List<String> merged = new ArrayList<>(symbols.size());
      for (int i = 0; i < symbols.size(); i++) {
        if (i + 1 < symbols.size()
            && symbols.get(i).equals(left)
            && symbols.get(i + 1).equals(right)) {
          merged.add(left + right);
          i++;
        } else {
          merged.add(symbols.get(i));
        }
      }
      symbols = merged;
    }
    List<Integer> ids = new ArrayList<>();
    for (String s : symbols) {
      Integer id = tokenToId.get(s);
      if (id != null) {
        ids.add(id);
      } else {
        for (int i = 0; i < s.length(); i++) {
          Integer c = tokenToId.get(String.valueOf(s.charAt(i)));
          if (c != null) {
            ids.add(c);
          }
        }
      }
    }
    int[] result = ids.stream().mapToInt(Integer::intValue).toArray();
    if (cache.size() < 100_000) {
      cache.put(word, result);
    }
    return result;
  }

  @Override
  public byte[] pieceBytes(int previous, int token) {
    return tokenBytes[token];
  }
}
