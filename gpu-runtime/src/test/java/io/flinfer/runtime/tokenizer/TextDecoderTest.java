package io.flinfer.runtime.tokenizer;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class TextDecoderTest {
  /** Byte tokens <0x00>..<0xFF> are ids 3..258, as in llama vocabularies; 259 is " Hi". */
  private static SentencePieceTokenizer tokenizer() {
    String[] pieces = new String[260];
    pieces[0] = "<unk>";
    pieces[1] = "<s>";
    pieces[2] = "</s>";
    for (int b = 0; b < 256; b++) {
      pieces[3 + b] = String.format("<0x%02X>", b);
    }
    pieces[259] = "\u2581Hi";
    return new SentencePieceTokenizer(pieces, new float[260], null, 1, 2, true, true);
  }

  @Test
  void holdsAUtf8CharacterSplitAcrossTokensUntilItIsComplete() {
    SentencePieceTokenizer tok = tokenizer();
    TextDecoder d = new TextDecoder(tok, 259);
    // U+1F999 (llama emoji) is F0 9F A6 99.
    assertThat(d.next(3 + 0xF0)).isEmpty();
    assertThat(d.next(3 + 0x9F)).isEmpty();
    assertThat(d.next(3 + 0xA6)).isEmpty();
    assertThat(d.next(3 + 0x99)).isEqualTo("\uD83E\uDD99");
    assertThat(d.next(259)).isEqualTo(" Hi");
  }

  @Test
  void dropsTheDummyPrefixSpaceOnlyAtTheStart() {
    SentencePieceTokenizer tok = tokenizer();
    assertThat(tok.decode(new int[] {1, 259, 259})).isEqualTo("Hi Hi");
    assertThat(new TextDecoder(tok, 259).next(259)).isEqualTo(" Hi");
  }

  @Test
  void flushReplacesAnIncompleteCharacter() {
    TextDecoder d = new TextDecoder(tokenizer(), 259);
    assertThat(d.next(3 + 0xE2)).isEmpty();
    assertThat(d.flush()).isEqualTo("\uFFFD");
  }
}
