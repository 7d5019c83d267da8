package io.flinfer.operators.detokenize;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinfer.runtime.model.LlamaModel;
import io.flinfer.runtime.testing.SharedFiles;
import io.flinfer.runtime.tokenizer.SentencePieceTokenizer;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class IncrementalDetokenizerTest {
  private static final int LAST_PROMPT_TOKEN = 378; // " time"

  @Test
  void deltasConcatenateToTheCompletionText() {
    LlamaModel model = SharedFiles.stories260k();
    IncrementalDetokenizer d =
        new IncrementalDetokenizer(model.tokenizer(), LAST_PROMPT_TOKEN, List.of());
    StringBuilder all = new StringBuilder();
    int[] golden = SharedFiles.goldenIds();
    for (int i = 0; i < 60; i++) {
      all.append(d.next(golden[i]));
    }
    all.append(d.finish());
    assertThat(all.toString())
        .isEqualTo(SharedFiles.goldenText(64).substring("Once upon a time".length()));
    assertThat(d.text()).isEqualTo(all.toString());
  }

  @Test
  void aStopStringEndsTheTextBeforeItAndNoneOfItIsEverEmitted() {
    LlamaModel model = SharedFiles.stories260k();
    IncrementalDetokenizer d =
        new IncrementalDetokenizer(
            model.tokenizer(), LAST_PROMPT_TOKEN, List.of("named Lily", "park"));
    List<String> deltas = new ArrayList<>();
    for (int t : SharedFiles.goldenIds()) {
      deltas.add(d.next(t));
    }
    deltas.add(d.finish());
    String text = String.join("", deltas);
    assertThat(d.stopped()).isTrue();
    assertThat(text).isEqualTo(", there was a little girl ");
    // "named" was held back until it could be told apart from "named Lily".
    assertThat(deltas).noneMatch(x -> x.contains("named"));
  }

  @Test
  void aCharacterSplitAcrossByteTokensIsEmittedWhole() {
    String[] pieces = new String[260];
    pieces[0] = "<unk>";
    pieces[1] = "<s>";
    pieces[2] = "</s>";
    for (int b = 0; b < 256; b++) {
      pieces[3 + b] = String.format("<0x%02X>", b);
    }
    pieces[259] = "\u2581Hi";
    SentencePieceTokenizer tok =
        new SentencePieceTokenizer(pieces, new float[260], null, 1, 2, true, true);
    IncrementalDetokenizer d = new IncrementalDetokenizer(tok, 259, List.of());
    assertThat(d.next(3 + 0xF0) + d.next(3 + 0x9F) + d.next(3 + 0xA6)).isEmpty();
    assertThat(d.next(3 + 0x99)).isEqualTo("\uD83E\uDD99");
    assertThat(d.next(259)).isEqualTo(" Hi");
  }
}
