package io.flinfer.runtime.tokenizer;

import java.text.Normalizer;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * How byte-level BPE text is split into words before merging, chosen by a GGUF file's {@code
 * tokenizer.ggml.pre}: the families' patterns as their Hugging Face tokenizers define them.
 */
public enum PreTokenizer {
  /** GPT-2's own split ({@code gpt-2}, {@code default}). */
  GPT2(
      "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+",
      false,
      false),
  /**
   * Llama 3 ({@code llama-bpe}, {@code llama3}): digits in runs of at most three, newlines apart,
   * and a whole word that is in the vocabulary taken as is, before any merge.
   */
  LLAMA3(
      "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}|"
          + " ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
      false,
      true),
  /** Qwen2/2.5/3 ({@code qwen2}): single digits, and text NFC-normalized first. */
  QWEN2(
      "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}|"
          + " ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
      true,
      false);

  private final Pattern pattern;
  private final boolean nfc;
  private final boolean wholeWordsFirst;

  PreTokenizer(String regex, boolean nfc, boolean wholeWordsFirst) {
    this.pattern = Pattern.compile(regex, Pattern.UNICODE_CHARACTER_CLASS);
    this.nfc = nfc;
    this.wholeWordsFirst = wholeWordsFirst;
  }

  Pattern pattern() {
    return pattern;
  }

  /** The text as this family normalizes it. */
  String normalize(String text) {
    return nfc ? Normalizer.normalize(text, Normalizer.Form.NFC) : text;
  }

  /** Whether a word that is a vocabulary entry is taken whole (Hugging Face's ignore_merges). */
  boolean wholeWordsFirst() {
    return wholeWordsFirst;
  }

  /**
   * The pre-tokenizer a GGUF {@code tokenizer.ggml.pre} value names.
   *
   * @throws IllegalArgumentException for one Flinfer does not implement: splitting another way
   *     would give other tokens than the model was trained on
   */
  public static PreTokenizer byGgufName(String name) {
    if (name == null) {
      return GPT2;
    }
    return switch (name.toLowerCase(Locale.ROOT)) {
      case "default", "gpt-2", "gpt2" -> GPT2;
      case "llama-bpe", "llama3" -> LLAMA3;
      case "qwen2" -> QWEN2;
      default ->
          throw new IllegalArgumentException(
              "tokenizer.ggml.pre = "
                  + name
                  + " is not supported (default, gpt-2, llama-bpe, llama3, qwen2 are)");
    };
  }
}
