package io.flinfer.avro.history;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinfer.avro.ChatMessage;
import io.flinfer.avro.PromptRequest;
import io.flinfer.avro.ToolCall;
import java.nio.ByteBuffer;
import java.util.List;
import org.apache.avro.Schema;
import org.apache.avro.SchemaNormalization;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.message.BinaryMessageDecoder;
import org.apache.avro.message.BinaryMessageEncoder;
import org.junit.jupiter.api.Test;

class PromptRequestsTest {
  @Test
  void theCurrentSchemaIsTheNewestPublishedOne() {
    long current = SchemaNormalization.parsingFingerprint64(PromptRequest.getClassSchema());
    var history = PromptRequests.history();
    assertThat(SchemaNormalization.parsingFingerprint64(history.get(history.size() - 1)))
        .as("add the current PromptRequest schema to history/ and raise VERSIONS")
        .isEqualTo(current);
  }

  @Test
  void everyPublishedSchemaIsDistinct() {
    assertThat(
            PromptRequests.history().stream()
                .map(SchemaNormalization::parsingFingerprint64)
                .distinct()
                .count())
        .isEqualTo(PromptRequests.VERSIONS);
  }

  /** A producer on an older schema: request "old", prompt "Hi", every other field its default. */
  private static PromptRequest writtenWith(Schema old) throws Exception {
    GenericRecord r = new GenericData.Record(old);
    for (Schema.Field f : old.getFields()) {
      r.put(
          f.name(),
          GenericData.get()
              .deepCopy(
                  f.schema(),
                  f.defaultVal() == null ? null : new GenericData().getDefaultValue(f)));
    }
    r.put("request_id", "old");
    r.put("prompt", "Hi");
    ByteBuffer bytes = new BinaryMessageEncoder<GenericRecord>(GenericData.get(), old).encode(r);
    return PromptRequests.decoder().decode(bytes);
  }

  /** {@code now} as a consumer on an older schema reads it. */
  private static GenericRecord readWith(Schema old, PromptRequest now) throws Exception {
    BinaryMessageDecoder<GenericRecord> reader = new BinaryMessageDecoder<>(GenericData.get(), old);
    reader.addSchema(PromptRequest.getClassSchema());
    return reader.decode(now.toByteBuffer());
  }

  @Test
  void conversationsCrossTheSchemaVersionsBothWays() throws Exception {
    Schema v2 = PromptRequests.history().get(1);
    // A producer on the schema before messages: its record reads with no messages.
    PromptRequest read = writtenWith(v2);
    assertThat(read.getRequestId()).isEqualTo("old");
    assertThat(read.getMessages()).isNull();

    // A consumer on the schema before messages reads a conversation's other fields.
    PromptRequest now =
        PromptRequest.newBuilder()
            .setRequestId("chat")
            .setMessages(List.of(new ChatMessage("user", "Hi", List.of(), null, null)))
            .build();
    GenericRecord seen = readWith(v2, now);
    assertThat(seen.get("request_id").toString()).isEqualTo("chat");
    assertThat(seen.hasField("messages")).isFalse();
  }

  @Test
  void topLogprobsCrossTheSchemaVersionsBothWays() throws Exception {
    Schema v3 = PromptRequests.history().get(2);
    PromptRequest read = writtenWith(v3);
    assertThat(read.getRequestId()).isEqualTo("old");
    assertThat(read.getTopLogprobs()).isZero();

    PromptRequest now =
        PromptRequest.newBuilder().setRequestId("alts").setPrompt("Hi").setTopLogprobs(5).build();
    GenericRecord seen = readWith(v3, now);
    assertThat(seen.get("prompt").toString()).isEqualTo("Hi");
    assertThat(seen.hasField("top_logprobs")).isFalse();
  }

  @Test
  void responseFormatCrossesTheSchemaVersionsBothWays() throws Exception {
    Schema v4 = PromptRequests.history().get(3);
    PromptRequest read = writtenWith(v4);
    assertThat(read.getRequestId()).isEqualTo("old");
    assertThat(read.getResponseFormat()).isEqualTo("text");
    assertThat(read.getJsonSchema()).isNull();
    assertThat(read.getLogitBias()).isEmpty();
    assertThat(read.getMinNewTokens()).isZero();

    PromptRequest now =
        PromptRequest.newBuilder()
            .setRequestId("json")
            .setPrompt("Hi")
            .setResponseFormat("json_schema")
            .setJsonSchema("{\"type\": \"object\"}")
            .setLogitBias(java.util.Map.of("42", -100f))
            .build();
    GenericRecord seen = readWith(v4, now);
    assertThat(seen.get("prompt").toString()).isEqualTo("Hi");
    assertThat(seen.hasField("response_format")).isFalse();
    assertThat(seen.hasField("json_schema")).isFalse();
    assertThat(seen.hasField("logit_bias")).isFalse();
  }

  @Test
  void toolsCrossTheSchemaVersionsBothWays() throws Exception {
    Schema v5 = PromptRequests.history().get(4);
    // A v5 producer's conversation reads with no tools and no tool calls.
    Schema message = v5.getField("messages").schema().getTypes().get(1).getElementType();
    GenericRecord turn = new GenericData.Record(message);
    turn.put("role", "user");
    turn.put("content", "Hi");
    GenericRecord r = new GenericData.Record(v5);
    for (Schema.Field f : v5.getFields()) {
      if (f.hasDefaultValue()) {
        r.put(
            f.name(), GenericData.get().deepCopy(f.schema(), GenericData.get().getDefaultValue(f)));
      }
    }
    r.put("request_id", "old");
    r.put("messages", List.of(turn));
    PromptRequest read =
        PromptRequests.decoder()
            .decode(new BinaryMessageEncoder<GenericRecord>(GenericData.get(), v5).encode(r));
    assertThat(read.getTools()).isNull();
    assertThat(read.getMessages())
        .singleElement()
        .satisfies(
            m -> {
              assertThat(m.getContent()).isEqualTo("Hi");
              assertThat(m.getToolCalls()).isEmpty();
              assertThat(m.getToolCallId()).isNull();
            });

    // A v5 consumer reads the turns of a conversation with tool calls, without them.
    PromptRequest now =
        PromptRequest.newBuilder()
            .setRequestId("tools")
            .setTools("[]")
            .setMessages(
                List.of(
                    new ChatMessage(
                        "assistant",
                        "",
                        List.of(new ToolCall("c1", "add", "{\"a\": 1}")),
                        null,
                        null),
                    new ChatMessage("tool", "2", List.of(), "c1", null)))
            .build();
    GenericRecord seen = readWith(v5, now);
    assertThat(seen.hasField("tools")).isFalse();
    @SuppressWarnings("unchecked")
    List<GenericRecord> turns = (List<GenericRecord>) seen.get("messages");
    assertThat(turns)
        .extracting(t -> t.get("role").toString())
        .containsExactly("assistant", "tool");
    assertThat(turns.get(1).hasField("tool_call_id")).isFalse();
  }

  @Test
  void thinkingSwitchesAndReasoningCrossTheSchemaVersionsBothWays() throws Exception {
    Schema v6 = PromptRequests.history().get(5);
    PromptRequest read = writtenWith(v6);
    assertThat(read.getRequestId()).isEqualTo("old");
    assertThat(read.getChatTemplateKwargs()).isNull();

    PromptRequest now =
        PromptRequest.newBuilder()
            .setRequestId("think")
            .setChatTemplateKwargs("{\"enable_thinking\": false}")
            .setMessages(
                List.of(
                    ChatMessage.newBuilder()
                        .setRole("assistant")
                        .setContent("51.")
                        .setReasoningContent("17 * 3")
                        .build()))
            .build();
    GenericRecord seen = readWith(v6, now);
    assertThat(seen.hasField("chat_template_kwargs")).isFalse();
    @SuppressWarnings("unchecked")
    List<GenericRecord> turns = (List<GenericRecord>) seen.get("messages");
    assertThat(turns.get(0).get("content").toString()).isEqualTo("51.");
    assertThat(turns.get(0).hasField("reasoning_content")).isFalse();
  }

  @Test
  void theThinkingBudgetCrossesTheSchemaVersionsBothWays() throws Exception {
    Schema v7 = PromptRequests.history().get(6);
    assertThat(writtenWith(v7).getThinkingTokenBudget()).isNull();
    PromptRequest now =
        PromptRequest.newBuilder().setRequestId("cap").setThinkingTokenBudget(64).build();
    GenericRecord seen = readWith(v7, now);
    assertThat(seen.get("request_id").toString()).isEqualTo("cap");
    assertThat(seen.hasField("thinking_token_budget")).isFalse();
  }

  @Test
  void promptLogprobsCrossTheSchemaVersionsBothWays() throws Exception {
    Schema v8 = PromptRequests.history().get(7);
    assertThat(writtenWith(v8).getPromptLogprobs()).isNull();
    PromptRequest now =
        PromptRequest.newBuilder()
            .setRequestId("eval")
            .setStream(true)
            .setPromptLogprobs(1)
            .build();
    GenericRecord seen = readWith(v8, now);
    assertThat(seen.get("request_id").toString()).isEqualTo("eval");
    assertThat(seen.hasField("prompt_logprobs")).isFalse();
  }

  @Test
  void aRegexAndAGrammarCrossTheSchemaVersionsBothWays() throws Exception {
    Schema v9 = PromptRequests.history().get(8);
    assertThat(writtenWith(v9).getRegex()).isNull();
    assertThat(writtenWith(v9).getGrammar()).isNull();
    PromptRequest now =
        PromptRequest.newBuilder()
            .setRequestId("answer")
            .setPrompt("Yes or no?")
            .setResponseFormat("regex")
            .setRegex("yes|no")
            .build();
    GenericRecord seen = readWith(v9, now);
    assertThat(seen.get("response_format").toString()).isEqualTo("regex");
    assertThat(seen.hasField("regex")).isFalse();
    PromptRequest derived =
        PromptRequest.newBuilder()
            .setRequestId("derived")
            .setPrompt("Count:")
            .setResponseFormat("grammar")
            .setGrammar("root ::= [0-9]+")
            .build();
    assertThat(readWith(v9, derived).hasField("grammar")).isFalse();
  }
}
