package io.flinfer.job.gateway;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import io.flinfer.avro.Completion;
import io.flinfer.avro.CompletionChunk;
import io.flinfer.avro.DeadLetter;
import io.flinfer.runtime.tokenizer.Tokenizer;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * One streamed answer as server-sent events, its choices' deltas interleaved as they arrive, each
 * with its choice's index. A choice's chunks are sent in token order ({@link InOrder}); when its
 * stream has a gap (a retry that joins a request already under way) the rest comes from its
 * completion, so each choice's streamed text always adds up to its completion's. The stream ends
 * when every choice has finished.
 */
final class EventStream {
  private static final ObjectMapper JSON = new ObjectMapper();

  private final HttpExchange x;
  private final boolean chat;
  private final String id;
  private final String model;
  private final long created;
  private final Choices choices;
  private final TokenLogprobs[] logprobs;
  private final InOrder[] chunks;
  private final StringBuilder[] sent;
  private OutputStream out;

  /**
   * @param tokens the tokenizer that names each token, when the tokens' log-probabilities go with
   *     each delta; else null
   */
  EventStream(
      HttpExchange x,
      boolean chat,
      String id,
      String model,
      long created,
      Choices choices,
      Tokenizer tokens) {
    this.x = x;
    this.chat = chat;
    this.id = id;
    this.model = model;
    this.created = created;
    this.choices = choices;
    int n = choices.size();
    this.logprobs = new TokenLogprobs[n];
    this.chunks = new InOrder[n];
    this.sent = new StringBuilder[n];
    for (int i = 0; i < n; i++) {
      logprobs[i] = tokens == null ? null : new TokenLogprobs(tokens, chat);
      chunks[i] = new InOrder(null);
      sent[i] = new StringBuilder();
    }
  }

  void serve(OpenAiRequest request, BlockingQueue<Object> events, Duration timeout)
      throws IOException {
    x.getResponseHeaders().set("Content-Type", "text/event-stream");
    x.getResponseHeaders().set("Cache-Control", "no-cache");
    x.sendResponseHeaders(200, 0);
    out = x.getResponseBody();
    if (chat) {
      for (int i = 0; i < choices.size(); i++) {
        send(OpenAiResponses.delta(true, id, model, created, i, "", true, null));
      }
    }
    Completion[] finished = new Completion[choices.size()];
    int left = finished.length;
    long end = System.nanoTime() + timeout.toNanos();
    try {
      while (left > 0) {
        Object e = events.poll(Math.max(0, end - System.nanoTime()), TimeUnit.NANOSECONDS);
        if (e == null) {
          send(GatewayServer.timedOut(timeout).body());
          break;
        }
        int i = choices.of(e);
        if (i < 0) {
          continue;
        }
        if (e instanceof CompletionChunk c) {
          chunk(i, c);
        } else if (e instanceof Completion c) {
          if (finished[i] == null) {
            finish(i, c);
            finished[i] = c;
            left--;
          }
        } else {
          send(GatewayServer.rejected((DeadLetter) e).body());
          break;
        }
      }
      if (left == 0 && request.includeUsage) {
        send(OpenAiResponses.usageEvent(chat, id, model, created, List.of(finished)));
      }
      out.write("data: [DONE]\n\n".getBytes(StandardCharsets.UTF_8));
      out.flush();
    } catch (InterruptedException ie) {
      Thread.currentThread().interrupt();
    } finally {
      out.close();
    }
  }

  private void chunk(int i, CompletionChunk c) throws IOException {
    if (!chunks[i].accept(c)
        || c.getTextDelta().isEmpty() && (logprobs[i] == null || c.getTokenIds().isEmpty())) {
      return;
    }
    sent[i].append(c.getTextDelta());
    ObjectNode event =
        OpenAiResponses.delta(chat, id, model, created, i, c.getTextDelta(), false, null);
    if (logprobs[i] != null) {
      ((ObjectNode) event.at("/choices/0")).set("logprobs", logprobs[i].of(c));
    }
    send(event);
  }

  /** The rest of choice {@code i}'s text that its chunks did not bring, then its finish reason. */
  private void finish(int i, Completion c) throws IOException {
    String text = c.getText();
    String already = sent[i].toString();
    if (text.startsWith(already) && text.length() > already.length()) {
      send(
          OpenAiResponses.delta(
              chat, id, model, created, i, text.substring(already.length()), false, null));
    }
    send(
        OpenAiResponses.delta(
            chat, id, model, created, i, null, false, OpenAiResponses.finishReason(c)));
  }

  private void send(ObjectNode event) throws IOException {
    out.write(
        ("data: " + JSON.writeValueAsString(event) + "\n\n").getBytes(StandardCharsets.UTF_8));
    out.flush();
  }
}
