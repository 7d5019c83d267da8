package io.flinfer.operators.format;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flinfer.avro.Completion;
import io.flinfer.avro.PromptRequest;
import io.flinfer.avro.Provenance;
import io.flinfer.avro.Timings;
import io.flinfer.avro.Usage;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** JSON requests as a client without Avro writes them: the schema's fields, strictly. */
class JsonRecordsTest {
  private static PromptRequest read(String json) throws JsonRecordException {
    return JsonRecords.read(json.getBytes(StandardCharsets.UTF_8), PromptRequest.getClassSchema());
  }

  @Test
  void aValidRequestTakesTheSchemasDefaults() throws Exception {
    PromptRequest r =
        read(
            "{\"request_id\": \"j1\", \"prompt\": \"Once upon a time\", \"max_new_tokens\": 12,"
                + " \"sampling\": {\"temperature\": 0, \"seed\": \"9007199254740991\"},"
                + " \"messages\": null, \"metadata\": {\"user\": \"u1\"}}");
    assertThat(r.getRequestId()).isEqualTo("j1");
    assertThat(r.getMaxNewTokens()).isEqualTo(12);
    assertThat(r.getSampling().getTemperature()).isZero();
    assertThat(r.getSampling().getTopP()).isEqualTo(1f);
    assertThat(r.getSampling().getSeed()).isEqualTo(9007199254740991L);
    assertThat(r.getTenant()).isEmpty();
    assertThat(r.getStop()).isEmpty();
    assertThat(r.getMetadata()).containsEntry("user", "u1");
    assertThat(
            read("{\"request_id\": \"c\", \"messages\": [{\"role\": \"user\", \"content\": \"Hi\"}]}")
                .getMessages())
        .hasSize(1);
  }

  @Test
  void olderAndNewerWritersResolve() throws Exception {
    // v1's fields only: everything added since takes its default.
    assertThat(read("{\"request_id\": \"old\", \"prompt\": \"x\"}").getMessages()).isNull();
    // A newer schema's optional field, left unset, is skipped; set, it is refused by name.
    assertThat(read("{\"request_id\": \"new\", \"priority\": null}").getRequestId())
        .isEqualTo("new");
    assertThatThrownBy(() -> read("{\"request_id\": \"new\", \"priority\": 3}"))
        .hasMessage("unknown field 'priority'");
  }

  @Test
  void jsonTextFieldsTakeTheValueItself() throws Exception {
    String schema =
        "{\"type\":\"object\",\"properties\":{\"z\":{\"type\":\"number\",\"maximum\":1.5},"
            + "\"a\":{\"type\":\"string\"}},\"required\":[\"z\"]}";
    String tools = "[{\"type\":\"function\",\"function\":{\"name\":\"get\",\"parameters\":{}}}]";
    PromptRequest asValues =
        read(
            "{\"request_id\": \"v\", \"response_format\": \"json_schema\", \"json_schema\": "
                + schema
                + ", \"messages\": [{\"role\": \"assistant\", \"content\": \"\", \"tool_calls\":"
                + " [{\"name\": \"get\", \"arguments\": {\"city\": \"Paris\", \"days\": [1, 2]}}]}],"
                + " \"tools\": "
                + tools
                + ", \"chat_template_kwargs\": {\"enable_thinking\": false}}");
    // Compact, members in their order (a schema's property order is its output's order).
    assertThat(asValues.getJsonSchema()).isEqualTo(schema);
    assertThat(asValues.getTools()).isEqualTo(tools);
    assertThat(asValues.getChatTemplateKwargs()).isEqualTo("{\"enable_thinking\":false}");
    assertThat(asValues.getMessages().get(0).getToolCalls().get(0).getArguments())
        .isEqualTo("{\"city\":\"Paris\",\"days\":[1,2]}");
    // The same as text, as before.
    PromptRequest asText =
        read(
            "{\"request_id\": \"t\", \"json_schema\": \""
                + schema.replace("\"", "\\\"")
                + "\", \"chat_template_kwargs\": \"{\\\"enable_thinking\\\": false}\"}");
    assertThat(asText.getJsonSchema()).isEqualTo(schema);
    assertThat(asText.getChatTemplateKwargs()).isEqualTo("{\"enable_thinking\": false}");
    // Other string fields still want strings.
    assertThatThrownBy(() -> read("{\"request_id\": \"a\", \"prompt\": {\"x\": 1}}"))
        .hasMessage("field 'prompt' must be a string, not object");
    assertThatThrownBy(() -> read("{\"request_id\": \"a\", \"tools\": 3}"))
        .hasMessage("field 'tools' must be a string, not number");
  }

  @Test
  void everyMistakeIsNamed() {
    assertThatThrownBy(() -> read("{\"prompt\": \"x\"}"))
        .hasMessage("missing required field 'request_id'");
    assertThatThrownBy(() -> read("{\"request_id\": \"a\", \"promt\": \"x\"}"))
        .hasMessage("unknown field 'promt'");
    assertThatThrownBy(() -> read("{\"request_id\": \"a\", \"sampling\": {\"topk\": 3}}"))
        .hasMessage("unknown field 'sampling.topk'");
    assertThatThrownBy(() -> read("{\"request_id\": 7}"))
        .hasMessage("field 'request_id' must be a string, not number");
    assertThatThrownBy(() -> read("{\"request_id\": \"a\", \"max_new_tokens\": 1e20}"))
        .hasMessage("field 'max_new_tokens' must be a 32-bit integer, not number");
    assertThatThrownBy(() -> read("{\"request_id\": \"a\", \"max_new_tokens\": 99999999999}"))
        .hasMessage("field 'max_new_tokens' must be a 32-bit integer, not number");
    assertThatThrownBy(
            () ->
                read(
                    "{\"request_id\": \"a\", \"sampling\": {\"seed\": \"123456789012345678901\"}}"))
        .hasMessage("field 'sampling.seed' must be a 64-bit integer, not string");
    assertThatThrownBy(() -> read("{\"request_id\": \"a\", \"stop\": [\"x\", 3]}"))
        .hasMessage("field 'stop[1]' must be a string, not number");
    assertThatThrownBy(() -> read("[1, 2]")).hasMessage("not a JSON object");
    assertThatThrownBy(() -> read("{\"request_id\": ")).hasMessageStartingWith("not JSON");
  }

  @Test
  void outputIsPlainJsonWithEveryField() throws Exception {
    Completion c =
        Completion.newBuilder()
            .setRequestId("r")
            .setText("Hi")
            .setFinishReason("stop")
            .setUsage(new Usage(3, 0, 1, 0))
            .setTimings(new Timings(1L, 2L, 3L, 4L))
            .setProvenance(Provenance.newBuilder().setSeed(9007199254740991L).build())
            .build();
    String json = new String(JsonRecords.write(c), StandardCharsets.UTF_8);
    assertThat(json)
        .contains("\"request_id\":\"r\"")
        .contains("\"finish_detail\":null")
        .contains("\"seed\":9007199254740991")
        .contains("\"usage\":{\"prompt_tokens\":3");
    Completion back =
        JsonRecords.read(json.getBytes(StandardCharsets.UTF_8), Completion.getClassSchema());
    assertThat(back).isEqualTo(c);
  }
}
