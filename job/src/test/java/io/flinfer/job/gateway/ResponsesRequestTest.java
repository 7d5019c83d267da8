package io.flinfer.job.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

/** A Responses API request as the chat completion it amounts to, or a 400 naming what is wrong. */
class ResponsesRequestTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  private static JsonNode chat(String body) throws Exception {
    return ResponsesRequest.parse(JSON.readTree(body)).chat;
  }

  @Test
  void itemsBecomeTheConversationAndParametersTheirChatForms() throws Exception {
    JsonNode c =
        chat(
            "{\"model\": \"m\", \"instructions\": \"Be brief.\", \"max_output_tokens\": 9,"
                + " \"temperature\": 0.5, \"stream\": true, \"seed\": 3, \"input\": ["
                + " {\"role\": \"developer\", \"content\": \"Use tools.\"},"
                + " {\"type\": \"message\", \"role\": \"user\", \"content\": [{\"type\":"
                + " \"input_text\", \"text\": \"Weather \"}, {\"type\": \"input_text\", \"text\":"
                + " \"in Paris?\"}]},"
                + " {\"type\": \"reasoning\", \"id\": \"rs_1\", \"summary\": []},"
                + " {\"type\": \"function_call\", \"call_id\": \"call_1\", \"name\": \"get\","
                + " \"arguments\": \"{}\"},"
                + " {\"type\": \"function_call\", \"call_id\": \"call_2\", \"name\": \"now\","
                + " \"arguments\": \"{}\"},"
                + " {\"type\": \"function_call_output\", \"call_id\": \"call_1\", \"output\": \"9C\"}],"
                + " \"tools\": [{\"type\": \"function\", \"name\": \"get\", \"parameters\": {}}],"
                + " \"tool_choice\": {\"type\": \"function\", \"name\": \"get\"},"
                + " \"text\": {\"format\": {\"type\": \"json_schema\", \"name\": \"w\", \"schema\":"
                + " {\"type\": \"object\"}}}, \"store\": false, \"metadata\": {\"k\": \"v\"}}");
    assertThat(c.path("max_completion_tokens").asInt()).isEqualTo(9);
    assertThat(c.path("seed").asInt()).isEqualTo(3);
    assertThat(c.at("/stream_options/include_usage").asBoolean()).isTrue();
    JsonNode m = c.get("messages");
    assertThat(m).hasSize(5);
    assertThat(m.get(0).toString()).isEqualTo("{\"role\":\"system\",\"content\":\"Be brief.\"}");
    assertThat(m.get(1).get("role").asText()).isEqualTo("system");
    assertThat(m.get(2).get("content").asText()).isEqualTo("Weather in Paris?");
    // Two calls in a row are one assistant turn.
    assertThat(m.get(3).get("tool_calls")).hasSize(2);
    assertThat(m.get(3).at("/tool_calls/1/function/name").asText()).isEqualTo("now");
    assertThat(m.get(4).toString())
        .isEqualTo("{\"role\":\"tool\",\"tool_call_id\":\"call_1\",\"content\":\"9C\"}");
    assertThat(c.at("/tools/0/function/name").asText()).isEqualTo("get");
    assertThat(c.at("/tool_choice/function/name").asText()).isEqualTo("get");
    assertThat(c.at("/response_format/json_schema/name").asText()).isEqualTo("w");
    assertThat(chat("{\"model\": \"m\", \"input\": \"Hi\"}").get("messages").toString())
        .isEqualTo("[{\"role\":\"user\",\"content\":\"Hi\"}]");
  }

  @Test
  void whatCannotBeHonouredIsRefusedByName() {
    String[][] refused = {
      {"\"previous_response_id\": \"resp_1\"", "previous_response_id"},
      {"\"background\": true", "background"},
      {"\"n\": 2", "n"},
      {"\"truncation\": \"auto\"", "truncation"},
      {"\"tools\": [{\"type\": \"web_search\"}]", "tools[0].type"},
      {"\"text\": {\"format\": {\"type\": \"xml\"}}", "text.format.type"},
    };
    for (String[] c : refused) {
      assertThatThrownBy(() -> chat("{\"model\": \"m\", \"input\": \"Hi\", " + c[0] + "}"))
          .as(c[0])
          .isInstanceOfSatisfying(ApiError.class, e -> assertThat(e.param).isEqualTo(c[1]));
    }
    assertThatThrownBy(() -> chat("{\"model\": \"m\"}"))
        .isInstanceOfSatisfying(ApiError.class, e -> assertThat(e.param).isEqualTo("input"));
    assertThatThrownBy(
            () ->
                chat(
                    "{\"model\": \"m\", \"input\": [{\"role\": \"user\", \"content\": [{\"type\":"
                        + " \"input_image\", \"image_url\": \"x\"}]}]}"))
        .isInstanceOfSatisfying(
            ApiError.class, e -> assertThat(e.param).isEqualTo("input[0].content[0].type"));
  }

  @Test
  void chatErrorsNameTheResponsesParameters() {
    ApiError e =
        ResponsesRequest.inResponsesTerms(
            ApiError.badParameter("max_completion_tokens", "must be at least 1"));
    assertThat(e.param).isEqualTo("max_output_tokens");
    assertThat(e.getMessage())
        .isEqualTo("Invalid value for 'max_output_tokens': must be at least 1");
    assertThat(
            ResponsesRequest.inResponsesTerms(
                    ApiError.badParameter("tools[1].function.parameters", "bad"))
                .param)
        .isEqualTo("tools[1].parameters");
    ApiError other = ApiError.unsupported("top_logprobs");
    assertThat(ResponsesRequest.inResponsesTerms(other)).isSameAs(other);
  }
}
