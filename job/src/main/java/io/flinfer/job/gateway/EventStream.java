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
 * One streamed answer as server-sent events. Chunks are sent in token order as they arrive ({@link
 * InOrder}); when the stream has a gap (a retry that joins a request already under way) the rest
 * comes from the completion, so the streamed text always adds up to the completion's.
 */
final class EventStream {
  private static final ObjectMapper JSON = new ObjectMapper();

  private final HttpExchange x;
  private final boolean chat;
  private final String id;
  private final String model;
  private final long created;
  private final TokenLogprobs logprobs;
  private final InOrder chunks;
  private OutputStream out;
  private final StringBuilder sent = new StringBuilder();

  /**
   * @param logprobs the tokens' log-probabilities go with each delta when not null
   */
  EventStream(
      HttpExchange x, boolean chat, String id, String model, long created, TokenLogprobs logprobs) {
    this.x = x;
    this.chat = chat;
    this.id = id;
    this.model = model;
    this.created = created;
    this.logprobs = logprobs;
    this.chunks = new InOrder(null);
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
    if (!chunks.accept(c)
        || c.getTextDelta().isEmpty() && (logprobs == null || c.getTokenIds().isEmpty())) {
      return;
    }
    sent.append(c.getTextDelta());
    ObjectNode event =
        OpenAiResponses.delta(chat, id, model, created, c.getTextDelta(), false, null);
    if (logprobs != null) {
      ((ObjectNode) event.at("/choices/0")).set("logprobs", logprobs.of(c));
    }
    send(event);
  }

  private void send(ObjectNode event) throws IOException {
    out.write(
        ("data: " + JSON.writeValueAsString(event) + "\n\n").getBytes(StandardCharsets.UTF_8));
    out.flush();
  }
}
