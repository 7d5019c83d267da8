package io.flinfer.job.gateway;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import io.flinfer.avro.Completion;
import io.flinfer.avro.CompletionChunk;
import io.flinfer.avro.DeadLetter;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * One streamed answer as server-sent events. Chunks are sent in token order as they arrive (a
 * repeat, which the at-least-once chunks topic may deliver, is dropped); when the stream has a gap
 * (a retry that joins a request already under way) the rest comes from the completion, so the
 * streamed text always adds up to the completion's.
 */
final class EventStream {
  private static final ObjectMapper JSON = new ObjectMapper();

  private final HttpExchange x;
  private final boolean chat;
  private final String id;
  private final String model;
  private final long created;
  private OutputStream out;
  private final StringBuilder sent = new StringBuilder();
  private int nextToken;
  private boolean gap;

  EventStream(HttpExchange x, boolean chat, String id, String model, long created) {
    this.x = x;
    this.chat = chat;
    this.id = id;
    this.model = model;
    this.created = created;
  }

  void serve(OpenAiRequest request, BlockingQueue<Object> events, Duration timeout)
      throws IOException {
    x.getResponseHeaders().set("Content-Type", "text/event-stream");
    x.getResponseHeaders().set("Cache-Control", "no-cache");
    x.sendResponseHeaders(200, 0);
    out = x.getResponseBody();
    if (chat) {
      send(OpenAiResponses.delta(true, id, model, created, "", true, null));
    }
    long end = System.nanoTime() + timeout.toNanos();
    try {
      while (true) {
        Object e = events.poll(Math.max(0, end - System.nanoTime()), TimeUnit.NANOSECONDS);
        if (e == null) {
          send(GatewayServer.timedOut(timeout).body());
          break;
        }
        if (e instanceof CompletionChunk c) {
          chunk(c);
        } else if (e instanceof Completion c) {
          String text = c.getText();
          if (text.startsWith(sent.toString()) && text.length() > sent.length()) {
            send(
                OpenAiResponses.delta(
                    chat, id, model, created, text.substring(sent.length()), false, null));
          }
          send(
              OpenAiResponses.delta(
                  chat, id, model, created, null, false, OpenAiResponses.finishReason(c)));
          if (request.includeUsage) {
            send(OpenAiResponses.usageEvent(chat, id, model, created, c));
          }
          break;
        } else {
          send(GatewayServer.rejected((DeadLetter) e).body());
          break;
        }
      }
      out.write("data: [DONE]\n\n".getBytes(StandardCharsets.UTF_8));
      out.flush();
    } catch (InterruptedException ie) {
      Thread.currentThread().interrupt();
    } finally {
      out.close();
    }
  }

  private void chunk(CompletionChunk c) throws IOException {
    if (gap || c.getIndex() < nextToken) {
      return;
    }
    if (c.getIndex() > nextToken) {
      gap = true; // joined late: the completion brings the rest
      return;
    }
    nextToken += c.getTokenIds().size();
    if (!c.getTextDelta().isEmpty()) {
      sent.append(c.getTextDelta());
      send(OpenAiResponses.delta(chat, id, model, created, c.getTextDelta(), false, null));
    }
  }

  private void send(ObjectNode event) throws IOException {
    out.write(
        ("data: " + JSON.writeValueAsString(event) + "\n\n").getBytes(StandardCharsets.UTF_8));
    out.flush();
  }
}
