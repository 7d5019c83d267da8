package io.flinfer.operators.flink;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinfer.avro.Completion;
import io.flinfer.avro.CompletionChunk;
import io.flinfer.avro.PromptRequest;
import io.flinfer.runtime.testing.SharedFiles;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.operators.KeyedProcessOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.junit.jupiter.api.Test;

/**
 * The detokenizer in Flink's operator test harness: a token whose text is held (part of a UTF-8
 * character) travels with the chunk that completes it, so the chunks carry every generated token
 * once, in order, and their text is the completion's.
 */
class DetokenizerTest {
  /** stories260K's byte tokens: {@code <0x00>} is id 3. */
  private static int byteToken(int b) {
    return 3 + b;
  }

  @Test
  void heldTokensTravelWithTheChunkThatCompletesTheirText() throws Exception {
    var dir = SharedFiles.stories260kDir();
    ModelSource source =
        new ModelSource(
            dir.resolve("stories260K.bin").toString(), dir.resolve("tok512.bin").toString());
    // A right quote split in three bytes, a word, then a lone lead byte that never completes.
    int word = SharedFiles.stories260k().tokenizer().encode("cat", false)[0];
    int[] tokens = {byteToken(0xE2), byteToken(0x80), byteToken(0x99), word, byteToken(0xE2)};
    TokenizedPrompt prompt = new TokenizedPrompt();
    prompt.request =
        PromptRequest.newBuilder().setRequestId("r").setPrompt("Once").setStream(true).build();
    prompt.promptIds = new int[] {1, 403};
    prompt.routingKey = "k";
    try (var h =
        new KeyedOneInputStreamOperatorTestHarness<String, TokenOutput, Completion>(
            new KeyedProcessOperator<>(new Detokenizer(source, "test")),
            t -> t.requestId,
            Types.STRING)) {
      h.open();
      for (int i = 0; i < tokens.length; i++) {
        TokenOutput t = new TokenOutput();
        t.requestId = "r";
        t.index = i;
        t.tokenId = tokens[i];
        t.logprob = -i;
        t.prompt = i == 0 ? prompt : null;
        if (i == tokens.length - 1) {
          t.finishType = "length";
        }
        h.processElement(t, 0);
      }
      List<CompletionChunk> chunks = new ArrayList<>();
      for (StreamRecord<CompletionChunk> r : h.getSideOutput(Detokenizer.CHUNKS)) {
        chunks.add(r.getValue());
      }
      Completion done = h.extractOutputValues().get(0);

      assertThat(chunks).extracting(CompletionChunk::getIndex).containsExactly(0, 3, 4);
      assertThat(chunks.get(0).getTokenIds())
          .containsExactly(byteToken(0xE2), byteToken(0x80), byteToken(0x99));
      assertThat(chunks.get(0).getLogprobs()).containsExactly(0f, -1f, -2f);
      assertThat(chunks.get(0).getTextDelta()).isEqualTo("\u2019");
      List<Integer> streamed = new ArrayList<>();
      StringBuilder text = new StringBuilder();
      for (CompletionChunk c : chunks) {
        streamed.addAll(c.getTokenIds());
        text.append(c.getTextDelta());
      }
      assertThat(streamed).containsExactly(tokens[0], tokens[1], tokens[2], tokens[3], tokens[4]);
      assertThat(text.toString()).isEqualTo(done.getText()).endsWith("\uFFFD");
      assertThat(done.getUsage().getCompletionTokens()).isEqualTo(tokens.length);
    }
  }
}
