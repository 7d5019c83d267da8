package io.flinfer.operators.flink;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinfer.avro.DeadLetter;
import io.flinfer.avro.PromptRequest;
import io.flinfer.operators.request.RequestLimits;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.api.operators.KeyedProcessOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.junit.jupiter.api.Test;

/** A request id is answered once within the window, across restores; a re-read is not a second. */
class RequestDedupeTest {
  private static final Duration WINDOW = Duration.ofHours(24);

  private static TokenizedPrompt prompt(String id, int partition, long offset) {
    TokenizedPrompt p = new TokenizedPrompt();
    p.request = PromptRequest.newBuilder().setRequestId(id).setPrompt("Once").build();
    p.promptIds = new int[] {1};
    p.routingKey = "k";
    p.topic = "prompts";
    p.partition = partition;
    p.offset = offset;
    return p;
  }

  private static KeyedOneInputStreamOperatorTestHarness<String, TokenizedPrompt, TokenizedPrompt>
      harness() throws Exception {
    return new KeyedOneInputStreamOperatorTestHarness<>(
        new KeyedProcessOperator<>(new RequestDedupe(WINDOW, RequestLimits.defaults())),
        p -> p.request.getRequestId(),
        Types.STRING);
  }

  private static List<String> passed(
      KeyedOneInputStreamOperatorTestHarness<String, TokenizedPrompt, TokenizedPrompt> h) {
    List<String> out = new ArrayList<>();
    for (TokenizedPrompt p : h.extractOutputValues()) {
      out.add(p.request.getRequestId() + "@" + p.offset);
    }
    return out;
  }

  private static List<DeadLetter> deadLetters(
      KeyedOneInputStreamOperatorTestHarness<String, TokenizedPrompt, TokenizedPrompt> h) {
    List<DeadLetter> out = new ArrayList<>();
    var side = h.getSideOutput(RequestDedupe.DEAD_LETTERS);
    if (side != null) {
      for (StreamRecord<DeadLetter> r : side) {
        out.add(r.getValue());
      }
    }
    return out;
  }

  @Test
  void aSecondRecordWithAnIdGetsADeadLetterNamingTheFirst() throws Exception {
    try (var h = harness()) {
      h.open();
      h.processElement(prompt("a", 0, 10), 0);
      h.processElement(prompt("b", 1, 11), 0);
      h.processElement(prompt("a", 1, 12), 0); // the same id, another record
      h.processElement(prompt("a", 0, 10), 0); // the first record read again: not a duplicate
      assertThat(passed(h)).containsExactly("a@10", "b@11");
      List<DeadLetter> dl = deadLetters(h);
      assertThat(dl).hasSize(1);
      DeadLetter d = dl.get(0);
      assertThat(d.getReason()).isEqualTo("duplicate_request_id");
      assertThat(d.getStage()).isEqualTo("dedupe");
      assertThat(d.getRequestId()).isEqualTo("a");
      assertThat(d.getSourcePartition()).isEqualTo(1);
      assertThat(d.getSourceOffset()).isEqualTo(12);
      assertThat(d.getOriginalSourcePartition()).isZero();
      assertThat(d.getOriginalSourceOffset()).isEqualTo(10);
      assertThat(d.getError()).contains("prompts-0 offset 10").contains("24h");
    }
  }

  @Test
  void theTakenIdsSurviveARestoreAndExpireAfterTheWindow() throws Exception {
    OperatorSubtaskState snapshot;
    try (var h = harness()) {
      h.open();
      h.setStateTtlProcessingTime(0);
      h.processElement(prompt("a", 0, 10), 0);
      snapshot = h.snapshot(1, 1);
    }
    try (var h = harness()) {
      h.initializeState(snapshot);
      h.open();
      h.setStateTtlProcessingTime(WINDOW.toMillis() - 1);
      h.processElement(prompt("a", 0, 20), 0);
      assertThat(passed(h)).isEmpty();
      assertThat(deadLetters(h)).hasSize(1);
      h.setStateTtlProcessingTime(WINDOW.toMillis() + 1);
      h.processElement(prompt("a", 0, 30), 0);
      assertThat(passed(h)).containsExactly("a@30");
    }
  }
}
