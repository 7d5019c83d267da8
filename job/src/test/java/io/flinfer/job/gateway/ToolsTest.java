package io.flinfer.job.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.flinfer.avro.Completion;
import io.flinfer.avro.PromptRequest;
import io.flinfer.avro.Provenance;
import io.flinfer.avro.Timings;
import io.flinfer.avro.Usage;
import io.flinfer.runtime.chat.ToolCall;
import io.flinfer.runtime.chat.ToolCallFormat;
import io.flinfer.runtime.grammar.JsonSchemaGrammar;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** tools, tool_choice and parallel_tool_calls into prompt records, and answers into calls. */
class ToolsTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String TOOLS =
      "\"tools\": [{\"type\": \"function\", \"function\": {\"name\": \"add\", \"parameters\":"
          + " {\"type\": \"object\", \"properties\": {\"a\": {\"type\": \"integer\"}}}}},"
          + " {\"type\": \"function\", \"function\": {\"name\": \"ping\"}}]";

  private static OpenAiRequest chat(String more) throws Exception {
    return OpenAiRequest.parse(
        JSON.readTree(
            "{\"model\": \"m\", \"messages\": [{\"role\": \"user\", \"content\": \"Hi\"}]"
                + (more.isEmpty() ? "" : ", " + more)
                + "}"),
        true,
        "m",
        () -> ToolCallFormat.HERMES);
  }

  private static Completion completion(String text, String finish) {
    return Completion.newBuilder()
        .setRequestId("oai-1")
        .setText(text)
        .setFinishReason(finish)
        .setUsage(new Usage(1, 1, 0, 0))
        .setTimings(Timings.newBuilder().build())
        .setProvenance(Provenance.newBuilder().build())
        .build();
  }

  private static boolean instance(String schema, String text) {
    byte[] b = text.getBytes(StandardCharsets.UTF_8);
    var p = JsonSchemaGrammar.compile(schema).start();
    return p.accept(b, 0, b.length) && p.isComplete();
  }

  @Test
  void autoHandsTheTemplateTheToolsAndReadsCallsBack() throws Exception {
    OpenAiRequest r = chat(TOOLS);
    PromptRequest p = r.record("oai-1", "", 0);
    assertThat(JSON.readTree(p.getTools()))
        .isEqualTo(JSON.readTree("[" + TOOLS.substring(9) + "]").get(0));
    assertThat(p.getResponseFormat()).isEqualTo("text");
    Tools.Answer a =
        r.tools.answer(
            completion(
                "Sure.\n<tool_call>\n{\"name\": \"add\", \"arguments\": {\"a\": 1}}\n</tool_call>",
                "stop"));
    assertThat(a.content()).isEqualTo("Sure.");
    assertThat(a.calls())
        .containsExactly(new ToolCall(ToolCall.idFor("oai-1", 0), "add", "{\"a\": 1}"));
    assertThat(a.finishReason()).isEqualTo("tool_calls");
    assertThat(r.tools.answer(completion("Just text", "length")))
        .isEqualTo(new Tools.Answer("Just text", List.of(), "length"));
    // Cut short by the token limit: the call as far as it got, as it streamed.
    assertThat(
            r.tools.answer(
                completion(
                    "Sure.\n<tool_call>\n{\"name\": \"add\", \"arguments\": {\"a\"", "length")))
        .isEqualTo(
            new Tools.Answer(
                "Sure.",
                List.of(new ToolCall(ToolCall.idFor("oai-1", 0), "add", "{\"a\"")),
                "length"));
    // Without parallel calls, the first call only.
    String two =
        "<tool_call>\n{\"name\": \"add\", \"arguments\": {\"a\": 1}}\n</tool_call>\n"
            + "<tool_call>\n{\"name\": \"ping\", \"arguments\": {}}\n</tool_call>";
    assertThat(r.tools.answer(completion(two, "stop")).calls()).hasSize(2);
    assertThat(
            chat(TOOLS + ", \"parallel_tool_calls\": false")
                .tools
                .answer(completion(two, "stop"))
                .calls())
        .extracting(ToolCall::name)
        .containsExactly("add");
  }

  @Test
  void aNamedFunctionConstrainsTheAnswerToItsParameters() throws Exception {
    OpenAiRequest r =
        chat(
            TOOLS
                + ", \"tool_choice\": {\"type\": \"function\", \"function\": {\"name\": \"add\"}}");
    PromptRequest p = r.record("oai-1", "", 0);
    assertThat(p.getResponseFormat()).isEqualTo("json_schema");
    assertThat(instance(p.getJsonSchema(), "{\"a\": 3}")).isTrue();
    assertThat(r.tools.answer(completion("{\"a\": 3}", "stop")))
        .isEqualTo(
            new Tools.Answer(
                null,
                List.of(new ToolCall(ToolCall.idFor("oai-1", 0), "add", "{\"a\": 3}")),
                "stop"));
    // A function without parameters takes an empty object.
    OpenAiRequest ping =
        chat(
            TOOLS
                + ", \"tool_choice\": {\"type\": \"function\", \"function\": {\"name\": \"ping\"}}");
    assertThat(instance(ping.record("x", "", 0).getJsonSchema(), "{}")).isTrue();
  }

  @Test
  void requiredConstrainsTheAnswerToCallsOfTheTools() throws Exception {
    String schema =
        chat(TOOLS + ", \"tool_choice\": \"required\"").record("x", "", 0).getJsonSchema();
    assertThat(
            instance(
                schema,
                "[{\"name\": \"add\", \"arguments\": {\"a\": 1}}, {\"name\": \"ping\", \"arguments\":"
                    + " {}}]"))
        .isTrue();
    assertThat(instance(schema, "[]")).isFalse();
    assertThat(instance(schema, "[{\"name\": \"ping\", \"arguments\": {\"a\": 1}}]")).isFalse();
    OpenAiRequest one =
        chat(TOOLS + ", \"tool_choice\": \"required\", \"parallel_tool_calls\": false");
    String single = one.record("x", "", 0).getJsonSchema();
    assertThat(
            instance(
                single,
                "[{\"name\": \"ping\", \"arguments\": {}}, {\"name\": \"ping\", \"arguments\": {}}]"))
        .isFalse();
    Tools.Answer a =
        one.tools.answer(completion("[{\"name\": \"ping\", \"arguments\": {}}]", "stop"));
    assertThat(a.calls()).extracting(ToolCall::name).containsExactly("ping");
    assertThat(a.finishReason()).isEqualTo("tool_calls");
    // Cut short by the token limit: the text is the answer.
    assertThat(one.tools.answer(completion("[{\"name\": \"pi", "length")).calls()).isEmpty();
  }

  @Test
  void noneHandsTheModelNoTools() throws Exception {
    PromptRequest p = chat(TOOLS + ", \"tool_choice\": \"none\"").record("x", "", 0);
    assertThat(p.getTools()).isNull();
    assertThat(p.getResponseFormat()).isEqualTo("text");
  }

  @Test
  void toolMessagesAndAssistantCallsMapToTheConversation() throws Exception {
    OpenAiRequest r =
        OpenAiRequest.parse(
            JSON.readTree(
                "{\"model\": \"m\", \"messages\": [{\"role\": \"user\", \"content\": \"Add\"},"
                    + " {\"role\": \"assistant\", \"content\": null, \"tool_calls\": [{\"id\": \"c1\","
                    + " \"type\": \"function\", \"function\": {\"name\": \"add\", \"arguments\":"
                    + " \"{\\\"a\\\": 1}\"}}]}, {\"role\": \"tool\", \"tool_call_id\": \"c1\","
                    + " \"content\": \"1\"}]}"),
            true,
            "m");
    var turns = r.record("x", "", 0).getMessages();
    assertThat(turns.get(1).getContent()).isEmpty();
    assertThat(turns.get(1).getToolCalls())
        .singleElement()
        .satisfies(
            c -> {
              assertThat(c.getId()).isEqualTo("c1");
              assertThat(c.getName()).isEqualTo("add");
              assertThat(c.getArguments()).isEqualTo("{\"a\": 1}");
            });
    assertThat(turns.get(2).getToolCallId()).isEqualTo("c1");
  }

  @Test
  void refusalsNameTheParameter() {
    String[][] cases = {
      {"\"tool_choice\": \"required\"", "tool_choice", "needs tools"},
      {"\"tools\": []", "tools", "non-empty array"},
      {"\"tools\": [{\"type\": \"code\"}]", "tools[0].type", "only function tools"},
      {
        "\"tools\": [{\"type\": \"function\", \"function\": {\"name\": \"a b\"}}]",
        "tools[0].function.name",
        "letters"
      },
      {TOOLS.replace("\"ping\"", "\"add\""), "tools[1].function.name", "repeats the name add"},
      {
        TOOLS + ", \"tool_choice\": {\"type\": \"function\", \"function\": {\"name\": \"x\"}}",
        "tool_choice",
        "names no function"
      },
      {TOOLS + ", \"tool_choice\": \"sometimes\"", "tool_choice", "must be none, auto, required"},
      {
        TOOLS + ", \"tool_choice\": \"required\", \"response_format\": {\"type\": \"json_object\"}",
        "response_format",
        "cannot be given"
      },
      {
        TOOLS.replace("\"integer\"", "\"integer\", \"not\": {\"const\": 2}")
            + ", \"tool_choice\": \"required\"",
        "tools[0].function.parameters",
        "json_schema at #/properties/a/not: keyword not is not supported"
      },
    };
    for (String[] c : cases) {
      assertThatThrownBy(() -> chat(c[0]))
          .as(c[0])
          .isInstanceOfSatisfying(ApiError.class, e -> assertThat(e.param).isEqualTo(c[1]))
          .hasMessageContaining(c[2]);
    }
    assertThatThrownBy(
            () ->
                OpenAiRequest.parse(
                    JSON.readTree(
                        "{\"model\": \"m\", \"messages\": [{\"role\": \"tool\", \"content\": \"1\"}]}"),
                    true,
                    "m"))
        .isInstanceOfSatisfying(
            ApiError.class, e -> assertThat(e.param).isEqualTo("messages[0].tool_call_id"));
  }

  @Test
  void callIdsAreTheSameForTheSameRequest() {
    assertThat(ToolCall.idFor("oai-1", 0))
        .isEqualTo(ToolCall.idFor("oai-1", 0))
        .isNotEqualTo(ToolCall.idFor("oai-1", 1))
        .matches("call_[0-9a-f]{24}");
  }
}
