package io.flinfer.runtime.tokenizer;

import java.text.Normalizer;
import java.util.Locale;
import java.util.function.Consumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * How byte-level BPE text is split into words before merging, chosen by a GGUF file's {@code
 * tokenizer.ggml.pre}: the families' patterns as their Hugging Face tokenizers define them.
 */
public enum PreTokenizer {
  /** GPT-2's own split ({@code gpt-2}, {@code default}, and the names llama.cpp reads as it). */
  GPT2(false, false, Words.GPT2),
  /**
   * Llama 3 ({@code llama-bpe}, {@code llama3}, {@code llama-v3}, {@code falcon3}): digits in runs
   * of at most three, newlines apart, and a whole word that is in the vocabulary taken as is,
   * before any merge.
   */
  LLAMA3(false, true, Words.LLAMA3),
  /**
   * Qwen2/2.5/3 ({@code qwen2}, and the Qwen-based {@code deepseek-r1-qwen} and {@code megrez}):
   * single digits, and text NFC-normalized first.
   */
  QWEN2(true, false, Words.QWEN2),
  /**
   * Mistral's Tekken ({@code tekken}: Mistral NeMo, Small 3, Ministral, Devstral): words split
   * where lower case turns to upper, single digits, and a whole word that is in the vocabulary
   * taken as is.
   */
  TEKKEN(false, true, Words.TEKKEN),
  /**
   * StarCoder, SmolLM, Refact, Command-R, CodeShell, EXAONE and Minerva: every digit a word of its
   * own, then GPT-2's split of the rest.
   */
  DIGITS_THEN_GPT2(false, false, "\\p{N}", Words.GPT2),
  /**
   * DeepSeek Coder: line breaks, letter runs and punctuation runs (each after at most one space),
   * CJK runs and single digits, one split after another.
   */
  DEEPSEEK_CODER(false, false, "[\\r\\n]", "\\s?\\p{L}+", "\\s?\\p{P}+", Words.CJK, "\\p{N}"),
  /**
   * DeepSeek LLM: line breaks, runs of cased letters and of ASCII or full-width punctuation (each
   * after at most one space), trailing spaces, CJK runs and digit runs.
   */
  DEEPSEEK_LLM(
      false,
      false,
      "[\\r\\n]",
      Words.DEEPSEEK_LETTERS,
      "\\s?[!-/:-~\uff01-\uff0f\uff1a-\uff5e\u2018-\u201f\u3000-\u3002]+",
      "\\s+\\z",
      Words.CJK,
      "\\p{N}+");

  /** The split patterns, kept apart so that several constants can share them. */
  private static final class Words {
    static final String GPT2 =
        "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";
    static final String LLAMA3 =
        "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}|"
            + " ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
    static final String QWEN2 =
        "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}|"
            + " ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

    static final String TEKKEN =
        "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+|"
            + "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*|"
            + "\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

    /**
     * CJK ideographs (U+4E00-U+9FA5), U+0800-U+4E00 and Hangul, as DeepSeek's tokenizers name them.
     */
    static final String CJK = "[\u4e00-\u9fa5\u0800-\u4e00\uac00-\ud7ff]+";

    /** DeepSeek LLM's letters: the scripts with upper and lower case, after at most one space. */
    static final String DEEPSEEK_LETTERS =
        "\\s?[A-Za-z\u00b5\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u01ba\u01bc-\u01bf\u01c4-\u0293"
            + "\u0295-\u02af\u0370-\u0373\u0376\u0377\u037b-\u037d\u037f\u0386\u0388-\u038a"
            + "\u038c\u038e-\u03a1\u03a3-\u03f5\u03f7-\u0481\u048a-\u052f\u0531-\u0556"
            + "\u10a0-\u10c5\u13a0-\u13f5\u13f8-\u13fd\u1c90-\u1cba\u1cbd-\u1cbf\u1d00-\u1d2b"
            + "\u1d6b-\u1d77\u1d79-\u1d9a\u1e00-\u1f15\u1f18-\u1f1d\u1f20-\u1f45\u1f48-\u1f4d"
            + "\u1f50-\u1f57\u1f59\u1f5b\u1f5d\u1f5f-\u1f7d\u1f80-\u1fb4\u1fb6-\u1fbc\u1fbe"
            + "\u1fc2-\u1fc4\u1fc6-\u1fcc\u1fd0-\u1fd3\u1fd6-\u1fdb\u1fe0-\u1fec\u1ff2-\u1ff4"
            + "\u1ff6-\u1ffc\u2102\u2107\u210a-\u2113\u2115\u2119-\u211d\u2124\u2126\u2128"
            + "\u212a-\u212d\u212f-\u2134\u2139\u213c-\u213f\u2145-\u2149\u214e\u2183\u2184"
            + "\u2c00-\u2c7b\u2c7e-\u2ce4\u2ceb-\u2cee\u2cf2\u2cf3\ua640-\ua66d\ua680-\ua69b"
            + "\ua722-\ua76f\ua771-\ua787\ua78b-\ua78e\uab70-\uabbf\ufb00-\ufb06\ufb13-\ufb17"
            + "\uff21-\uff3a\uff41-\uff5a\\x{10400}-\\x{1044f}\\x{104b0}-\\x{104d3}"
            + "\\x{104d8}-\\x{104fb}\\x{10c80}-\\x{10cb2}\\x{10cc0}-\\x{10cf2}\\x{118a0}-\\x{118df}"
            + "\\x{1e900}-\\x{1e943}]+";

    private Words() {}
  }

  /** The splits, applied one after another: each splits the pieces the one before left. */
  private final Pattern[] stages;

  private final boolean nfc;
  private final boolean wholeWordsFirst;

  PreTokenizer(boolean nfc, boolean wholeWordsFirst, String... regexes) {
    this.stages = new Pattern[regexes.length];
    for (int i = 0; i < regexes.length; i++) {
      stages[i] = Pattern.compile(regexes[i], Pattern.UNICODE_CHARACTER_CLASS);
    }
    this.nfc = nfc;
    this.wholeWordsFirst = wholeWordsFirst;
  }

  /**
   * The words of {@code text}, in order, to {@code words}. Each split keeps what its pattern does
   * not match as words too (as the Hugging Face tokenizers' isolated splits and llama.cpp do), so
   * the words always make up the whole text.
   */
  void split(String text, Consumer<String> words) {
    split(text, 0, words);
  }

  private void split(String piece, int stage, Consumer<String> words) {
    if (stage == stages.length) {
      words.accept(piece);
      return;
    }
    Matcher m = stages[stage].matcher(piece);
    int done = 0;
    while (m.find()) {
      if (m.start() > done) {
        split(piece.substring(done, m.start()), stage + 1, words);
      }
      if (m.end() > m.start()) {
        split(m.group(), stage + 1, words);
      }
      done = m.end();
    }
    if (done < piece.length()) {
      split(piece.substring(done), stage + 1, words);
    }
  }

  /** The text as this family normalizes it. */
  String normalize(String text) {
    return nfc ? Normalizer.normalize(text, Normalizer.Form.NFC) : text;
  }

  /** Whether a word that is a vocabulary entry is taken whole (Hugging Face's ignore_merges). */
  boolean wholeWordsFirst() {
    return wholeWordsFirst;
  }

  private static final String SUPPORTED =
      "default, gpt-2 and its aliases (phi-2, mpt, olmo, jais, roberta-bpe, gigachat, jina-*),"
          + " llama-bpe, llama3, llama-v3, falcon3, qwen2, deepseek-r1-qwen, megrez, tekken, starcoder,"
          + " smollm, refact, command-r, codeshell, exaone, minerva-7b, deepseek-coder,"
          + " deepseek-llm";

  /**
   * The pre-tokenizer a GGUF {@code tokenizer.ggml.pre} value names: the names llama.cpp reads,
   * each with the split llama.cpp and the family's Hugging Face tokenizer give it.
   *
   * @throws IllegalArgumentException for one Flinfer does not implement: splitting another way
   *     would give other tokens than the model was trained on
   */
  public static PreTokenizer byGgufName(String name) {
    if (name == null) {
      return GPT2;
    }
    return switch (name.toLowerCase(Locale.ROOT)) {
      case "default",
              "gpt-2",
              "gpt2",
              "phi-2",
              "mpt",
              "olmo",
              "jais",
              "roberta-bpe",
              "gigachat",
              "jina-es",
              "jina-de",
              "jina-v1-en",
              "jina-v2-es",
              "jina-v2-de",
              "jina-v2-code" ->
          GPT2;
      case "llama-bpe", "llama3", "llama-v3", "falcon3" -> LLAMA3;
      case "qwen2", "deepseek-r1-qwen", "megrez" -> QWEN2;
      case "starcoder", "smollm", "refact", "command-r", "codeshell", "exaone", "minerva-7b" ->
          DIGITS_THEN_GPT2;
      case "tekken" -> TEKKEN;
      case "deepseek-coder" -> DEEPSEEK_CODER;
      case "deepseek-llm" -> DEEPSEEK_LLM;
      default ->
          throw new IllegalArgumentException(
              "tokenizer.ggml.pre = " + name + " is not supported (" + SUPPORTED + " are)");
    };
  }
}
