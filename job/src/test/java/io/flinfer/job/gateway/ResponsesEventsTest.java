package io.flinfer.job.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A streamed chat answer as the Responses API's events, against the whole answer's response. */
class ResponsesEventsTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  private static ObjectNode chunk(String delta) throws Exception {
    return (ObjectNode)
        JSON.readTree(
            "{\"object\": \"chat.completion.chunk\", \"choices\": [{\"index\": 0,"
                + " \"delta\": "
                + delta
                + ", \"finish_reason\": null}]}");
  }

  private static List<JsonNode> events(ByteArrayOutputStream out) throws Exception {
    List<JsonNode> events = new ArrayList<>();
    for (String line : out.toString(StandardCharsets.UTF_8).split("\n")) {
      if (line.startsWith("data: ")) {
        events.add(JSON.readTree(line.substring(6)));
      }
    }
    return events;
  }

  @Test
  void theStreamsEventsAddUpToTheWholeResponse() throws Exception {
    JsonNode request = JSON.readTree("{\"model\": \"m\", \"input\": \"Hi\", \"temperature\": 0}");
    ResponsesEvents s = new ResponsesEvents("x1", 7, "m", request);
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    s.send(out, chunk("{\"role\": \"assistant\", \"content\": \"\"}"));
    s.send(out, chunk("{\"reasoning_content\": \"Think\"}"));
    s.send(out, chunk("{\"reasoning_content\": \"ing.\"}"));
    s.send(out, chunk("{\"content\": \"Call \"}"));
    s.send(out, chunk("{\"content\": \"it.\"}"));
    s.send(
        out,
        chunk(
            "{\"tool_calls\": [{\"index\": 0, \"id\": \"call_a\", \"type\": \"function\","
                + " \"function\": {\"name\": \"get\", \"arguments\": \"{\\\"a\\\"\"}}]}"));
    s.send(
        out, chunk("{\"tool_calls\": [{\"index\": 0, \"function\": {\"arguments\": \": 1}\"}}]}"));
    ObjectNode last = chunk("{}");
    ((ObjectNode) last.at("/choices/0")).put("finish_reason", "tool_calls");
    s.send(out, last);
    s.send(
        out,
        (ObjectNode)
            JSON.readTree(
                "{\"choices\": [], \"usage\": {\"prompt_tokens\": 5, \"completion_tokens\": 9,"
                    + " \"completion_tokens_details\": {\"reasoning_tokens\": 3}}}"));
    s.end(out);

    List<JsonNode> events = events(out);
    for (int i = 0; i < events.size(); i++) {
      assertThat(events.get(i).get("sequence_number").asInt()).isEqualTo(i);
    }
    assertThat(events.stream().map(e -> e.get("type").asText()).toList())
        .containsExactly(
            "response.created",
            "response.in_progress",
            "response.output_item.added",
            "response.content_part.added",
            "response.reasoning_text.delta",
            "response.reasoning_text.delta",
            "response.reasoning_text.done",
            "response.content_part.done",
            "response.output_item.done",
            "response.output_item.added",
            "response.content_part.added",
            "response.output_text.delta",
            "response.output_text.delta",
            "response.output_text.done",
            "response.content_part.done",
            "response.output_item.done",
            "response.output_item.added",
            "response.function_call_arguments.delta",
            "response.function_call_arguments.delta",
            "response.function_call_arguments.done",
            "response.output_item.done",
            "response.completed");

    ObjectNode chat =
        (ObjectNode)
            JSON.readTree(
                "{\"model\": \"m\", \"choices\": [{\"index\": 0, \"message\": {\"role\":"
                    + " \"assistant\", \"content\": \"Call it.\", \"reasoning_content\":"
                    + " \"Thinking.\", \"tool_calls\": [{\"id\": \"call_a\", \"type\": \"function\","
                    + " \"function\": {\"name\": \"get\", \"arguments\": \"{\\\"a\\\": 1}\"}}]},"
                    + " \"finish_reason\": \"tool_calls\"}], \"usage\": {\"prompt_tokens\": 5,"
                    + " \"completion_tokens\": 9, \"completion_tokens_details\":"
                    + " {\"reasoning_tokens\": 3}}}");
    JsonNode whole = ResponsesAnswer.fromChat(chat, "x1", 7, request);
    // As sent: the same JSON text (read back, its numbers' node types differ from built ones).
    assertThat(events.get(events.size() - 1).get("response").toString())
        .isEqualTo(whole.toString());
    assertThat(whole.get("status").asText()).isEqualTo("completed");
    assertThat(whole.at("/usage/output_tokens_details/reasoning_tokens").asInt()).isEqualTo(3);
  }

  @Test
  void anErrorEndsTheStream() throws Exception {
    ResponsesEvents s = new ResponsesEvents("x2", 7, "m", JSON.readTree("{}"));
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    s.send(out, new ApiError(504, "timeout", null, "timeout", "No answer.").body());
    s.end(out);
    assertThat(events(out).stream().map(e -> e.get("type").asText()).toList())
        .containsExactly("response.created", "response.in_progress", "error");
  }
}
