package io.flinfer.job.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;

/**
 * A streamed chat answer as the Responses API streams it: {@code response.created}, then for each
 * output item in the order the model writes them (its thought, its text, each function call) the
 * item's {@code added} event, its deltas ({@code response.reasoning_text.delta}, {@code
 * response.output_text.delta}, {@code response.function_call_arguments.delta}) and its {@code done}
 * events, and last {@code response.completed} (or {@code response.incomplete} at the token limit)
 * with the whole response, usage included. An error is an {@code error} event, and ends the stream.
 * Every event carries its {@code sequence_number}.
 */
final class ResponsesEvents implements EventStream.Sink {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final JsonNodeFactory F = JsonNodeFactory.instance;

  private enum Kind {
    REASONING,
    MESSAGE,
    FUNCTION_CALL
  }

  private final String id;
  private final long created;
  private final String model;
  private final JsonNode request;
  private final ArrayNode output = F.arrayNode();
  private int sequence;
  private boolean started;
  private boolean failed;
  private Kind open; // the kind of the last item, while it is open
  private final StringBuilder text = new StringBuilder(); // the open item's text or arguments
  private int calls; // function call items so far
  private String finish;
  private ObjectNode usage;

  ResponsesEvents(String id, long created, String model, JsonNode request) {
    this.id = id;
    this.created = created;
    this.model = model;
    this.request = request;
  }

  @Override
  public void send(OutputStream out, ObjectNode chunk) throws IOException {
    if (failed) {
      return;
    }
    start(out);
    if (chunk.has("error")) {
      failed = true;
      JsonNode e = chunk.get("error");
      ObjectNode error = event("error");
      error.set("code", e.get("code"));
      error.set("message", e.get("message"));
      error.set("param", e.get("param"));
      emit(out, error);
      return;
    }
    if (chunk.hasNonNull("usage")) {
      usage = ResponsesAnswer.usage(chunk.get("usage"));
    }
    JsonNode choice = chunk.path("choices").path(0);
    if (choice.isMissingNode()) {
      return;
    }
    JsonNode delta = choice.path("delta");
    String thought = delta.path("reasoning_content").asText("");
    if (!thought.isEmpty()) {
      more(out, Kind.REASONING, thought, null);
    }
    String content = delta.path("content").asText("");
    if (!content.isEmpty()) {
      more(out, Kind.MESSAGE, content, null);
    }
    for (JsonNode call : delta.path("tool_calls")) {
      String arguments = call.at("/function/arguments").asText("");
      if (call.has("id")) {
        more(out, Kind.FUNCTION_CALL, arguments, call);
      } else if (!arguments.isEmpty() && open == Kind.FUNCTION_CALL) {
        // More of the open call: a call's arguments follow its first delta, before anything else.
        more(out, Kind.FUNCTION_CALL, arguments, null);
      }
    }
    if (choice.hasNonNull("finish_reason")) {
      finish = choice.get("finish_reason").asText();
    }
  }

  @Override
  public void end(OutputStream out) throws IOException {
    if (failed) {
      return;
    }
    start(out);
    close(out);
    String last = finish != null && finish.equals("length") ? "incomplete" : "completed";
    emit(
        out, event("response." + last).set("response", response(finish == null ? "stop" : finish)));
  }

  /** The stream's first events, once. */
  private void start(OutputStream out) throws IOException {
    if (!started) {
      started = true;
      ObjectNode r = response(null);
      emit(out, event("response.created").set("response", r));
      emit(out, event("response.in_progress").set("response", r));
    }
  }

  /**
   * More of an item of {@code kind}: a new item (closing the open one) unless it continues the open
   * one; {@code newCall} is a function call's first delta (its id and name).
   */
  private void more(OutputStream out, Kind kind, String piece, JsonNode newCall)
      throws IOException {
    if (open != kind || newCall != null) {
      close(out);
      open(out, kind, newCall);
    }
    text.append(piece);
    if (piece.isEmpty()) {
      return;
    }
    ObjectNode e =
        switch (kind) {
          case REASONING -> contentEvent("response.reasoning_text.delta");
          case MESSAGE -> contentEvent("response.output_text.delta").set("logprobs", F.arrayNode());
          case FUNCTION_CALL -> itemEvent("response.function_call_arguments.delta");
        };
    emit(out, e.put("delta", piece));
  }

  private void open(OutputStream out, Kind kind, JsonNode call) throws IOException {
    open = kind;
    text.setLength(0);
    ObjectNode item =
        switch (kind) {
          case REASONING -> ResponsesAnswer.reasoningItem(id, null, "in_progress");
          case MESSAGE -> ResponsesAnswer.messageItem(id, null, "in_progress");
          case FUNCTION_CALL ->
              ResponsesAnswer.functionCallItem(
                  id,
                  calls++,
                  call.path("id").asText(),
                  call.at("/function/name").asText(),
                  "",
                  "in_progress");
        };
    output.add(item);
    emit(out, itemEvent("response.output_item.added").set("item", item.deepCopy()));
    if (kind == Kind.REASONING) {
      emit(
          out,
          contentEvent("response.content_part.added")
              .set("part", ResponsesAnswer.reasoningPart("")));
    } else if (kind == Kind.MESSAGE) {
      emit(
          out,
          contentEvent("response.content_part.added").set("part", ResponsesAnswer.textPart("")));
    }
  }

  /** Ends the open item, if any: its done events, and its final form in the output. */
  private void close(OutputStream out) throws IOException {
    if (open == null) {
      return;
    }
    ObjectNode item = (ObjectNode) output.get(output.size() - 1);
    String whole = text.toString();
    switch (open) {
      case REASONING -> {
        emit(out, contentEvent("response.reasoning_text.done").put("text", whole));
        ObjectNode part = ResponsesAnswer.reasoningPart(whole);
        emit(out, contentEvent("response.content_part.done").set("part", part));
        ((ArrayNode) item.get("content")).add(part.deepCopy());
      }
      case MESSAGE -> {
        emit(
            out,
            contentEvent("response.output_text.done")
                .put("text", whole)
                .set("logprobs", F.arrayNode()));
        ObjectNode part = ResponsesAnswer.textPart(whole);
        emit(out, contentEvent("response.content_part.done").set("part", part));
        ((ArrayNode) item.get("content")).add(part.deepCopy());
      }
      case FUNCTION_CALL -> {
        emit(out, itemEvent("response.function_call_arguments.done").put("arguments", whole));
        item.put("arguments", whole);
      }
    }
    item.put("status", "completed");
    emit(out, itemEvent("response.output_item.done").set("item", item.deepCopy()));
    open = null;
  }

  private ObjectNode response(String finishReason) {
    return ResponsesAnswer.response(
        id, created, model, request, output.deepCopy(), finishReason, usage);
  }

  private ObjectNode event(String type) {
    return F.objectNode().put("type", type);
  }

  /** An event about the open (last) item. */
  private ObjectNode itemEvent(String type) {
    return event(type)
        .put("output_index", output.size() - 1)
        .put("item_id", output.get(output.size() - 1).path("id").asText());
  }

  /** An event about the open item's one content part. */
  private ObjectNode contentEvent(String type) {
    return itemEvent(type).put("content_index", 0);
  }

  private void emit(OutputStream out, ObjectNode event) throws IOException {
    event.put("sequence_number", sequence++);
    out.write(
        ("event: "
                + event.get("type").asText()
                + "\ndata: "
                + JSON.writeValueAsString(event)
                + "\n\n")
            .getBytes(StandardCharsets.UTF_8));
    out.flush();
  }
}
