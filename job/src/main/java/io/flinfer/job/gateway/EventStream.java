package io.flinfer.job.gateway;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import io.flinfer.avro.Completion;
import io.flinfer.avro.CompletionChunk;
import io.flinfer.avro.DeadLetter;
import io.flinfer.runtime.chat.ReasoningParser;
import io.flinfer.runtime.chat.ReasoningParser.Split;
import io.flinfer.runtime.chat.ReasoningStream;
import io.flinfer.runtime.chat.ToolCall;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;

/**
 * One streamed answer as server-sent events, its choices' deltas interleaved as they arrive, each
 * with its choice's index. A choice's chunks are sent in token order ({@link InOrder}); when its
 * stream has a gap (a retry that joins a request already under way) the rest comes from its
 * completion, so each choice's streamed text always adds up to its completion's. A thinking model's
 * thinking goes out as {@code reasoning_content} deltas, apart from its content, where the request
 * separates it. The stream ends when every choice has finished.
 */
final class EventStream {
  private static final ObjectMapper JSON = new ObjectMapper();

  private final HttpExchange x;
  private final boolean chat;
  private final String id;
  private final String model;
  private final long created;
  private final Choices choices;
  private final boolean logprobs;
  private final InOrder[] chunks;
  private final PromptLogprobsAnswer[] prompts; // null: prompt_logprobs are not asked for
  private final int[] promptLens;
  private final boolean[] promptSent;
  private final boolean[] echoSent;
  private String[] echoes;
  private final StringBuilder[] sent;
  private final StringBuilder[] generated;
  private final int[] released; // with auto tools: where the content sent so far ends
  private final ReasoningParser reasoning; // null: the text is all content
  private final ReasoningStream[] thinking;
  private final StringBuilder[] sentReasoning;
  private final List<List<Integer>> sentArguments; // per choice, per call: the characters sent
  private Tools tools; // the request's, when they shape its answers
  private OutputStream out;
  private Sink sink = Sink.CHAT;

  /**
   * Where the stream's events go: each chat (or completion) chunk, error or usage event as the chat
   * API sends it, then the end. The Responses API translates them into its own events.
   */
  interface Sink {
    Sink CHAT =
        new Sink() {
          @Override
          public void send(OutputStream out, ObjectNode event) throws IOException {
            out.write(
                ("data: " + JSON.writeValueAsString(event) + "\n\n")
                    .getBytes(StandardCharsets.UTF_8));
            out.flush();
          }

          @Override
          public void end(OutputStream out) throws IOException {
            out.write("data: [DONE]\n\n".getBytes(StandardCharsets.UTF_8));
            out.flush();
          }
        };

    void send(OutputStream out, ObjectNode event) throws IOException;

    void end(OutputStream out) throws IOException;
  }

  /** Sends the stream's events to {@code s} instead of as chat chunks. */
  EventStream to(Sink s) {
    this.sink = s;
    return this;
  }

  /**
   * @param chunks takes each choice's chunks in order, gathering their log-probabilities (and with
   *     echo, its prompt's first) where they go with each delta
   * @param logprobs whether the tokens' log-probabilities go with each delta
   * @param prompts gathers each choice's vLLM {@code prompt_logprobs}, or null where none are asked
   * @param promptLens each choice's prompt tokens, where {@code prompts} are given (-1: unknown)
   * @param reasoning what tells the thinking from the content, or null to send all as content
   */
  EventStream(
      HttpExchange x,
      boolean chat,
      String id,
      String model,
      long created,
      Choices choices,
      IntFunction<InOrder> chunks,
      boolean logprobs,
      PromptLogprobsAnswer[] prompts,
      int[] promptLens,
      ReasoningParser reasoning) {
    this.x = x;
    this.chat = chat;
    this.id = id;
    this.model = model;
    this.created = created;
    this.choices = choices;
    int n = choices.size();
    this.logprobs = logprobs;
    this.chunks = new InOrder[n];
    this.prompts = prompts;
    this.promptLens = promptLens;
    this.promptSent = new boolean[n];
    this.echoSent = new boolean[n];
    this.sent = new StringBuilder[n];
    this.generated = new StringBuilder[n];
    this.released = new int[n];
    this.reasoning = reasoning;
    this.thinking = new ReasoningStream[n];
    this.sentReasoning = new StringBuilder[n];
    this.sentArguments = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      sentArguments.add(new ArrayList<>());
      thinking[i] = reasoning == null ? null : reasoning.stream();
      sentReasoning[i] = new StringBuilder();
      generated[i] = new StringBuilder();
      this.chunks[i] = chunks.apply(i);
      sent[i] = new StringBuilder();
    }
  }

  void serve(OpenAiRequest request, BlockingQueue<Object> events, Duration timeout)
      throws IOException {
    tools =
        request.tools == null || request.tools.choice == Tools.Choice.NONE ? null : request.tools;
    x.getResponseHeaders().set("Content-Type", "text/event-stream");
    x.getResponseHeaders().set("Cache-Control", "no-cache");
    x.sendResponseHeaders(200, 0);
    out = x.getResponseBody();
    if (chat) {
      for (int i = 0; i < choices.size(); i++) {
        send(OpenAiResponses.delta(true, id, model, created, i, "", true, null));
      }
    } else if (request.echo) {
      // Each choice's text starts with its prompt; with logprobs, once they are all here.
      echoes = new String[choices.size()];
      for (int i = 0; i < choices.size(); i++) {
        echoes[i] = request.echo(i);
        if (!request.promptLogprobs() || chunks[i].promptComplete()) {
          sendEcho(i);
        }
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
          if (prompts != null) {
            prompts[i].accept(c);
          }
          if (!chunks[i].accept(c)) {
            continue;
          }
          if (c.getPromptLogprobs() != null) {
            if (echoes != null && !echoSent[i] && chunks[i].promptComplete()) {
              sendEcho(i);
            }
            continue;
          }
          Split s =
              thinking[i] == null
                  ? new Split(null, c.getTextDelta())
                  : thinking[i].next(c.getTextDelta());
          if (tools == null) {
            chunk(i, c, s);
          } else {
            toolChunk(i, c, s);
          }
        } else if (e instanceof Completion c) {
          if (finished[i] == null) {
            if (echoes != null && !echoSent[i]) {
              sendEcho(i); // its prompt's log-probabilities did not all come: the text alone
            }
            if (prompts != null && promptLens[i] < 0) {
              promptLens[i] = c.getUsage().getPromptTokens();
            }
            Split whole = OpenAiResponses.split(reasoning, c);
            Completion answered = OpenAiResponses.answerOnly(c, whole);
            String thought = rest(sentReasoning[i], whole.reasoning());
            if (tools == null) {
              finish(i, answered, thought);
            } else {
              toolFinish(i, answered, thought);
            }
            finished[i] = c;
            left--;
          }
        } else {
          send(GatewayServer.rejected((DeadLetter) e).body());
          break;
        }
      }
      if (left == 0 && request.includeUsage) {
        send(
            OpenAiResponses.usageEvent(
                chat, id, model, created, List.of(finished), request.perPrompt, reasoning != null));
      }
      sink.end(out);
    } catch (InterruptedException ie) {
      Thread.currentThread().interrupt();
    } finally {
      out.close();
    }
  }

  private void chunk(int i, CompletionChunk c, Split s) throws IOException {
    String content = s.content();
    String thought = s.reasoning() == null ? "" : s.reasoning();
    if (content.isEmpty() && thought.isEmpty() && (!logprobs || c.getTokenIds().isEmpty())) {
      return;
    }
    sent[i].append(content);
    ObjectNode event =
        OpenAiResponses.delta(
            chat,
            id,
            model,
            created,
            i,
            content.isEmpty() && !thought.isEmpty() ? null : content,
            false,
            null);
    withThought(event, i, thought);
    if (logprobs) {
      ((ObjectNode) event.at("/choices/0")).set("logprobs", chunks[i].lastLogprobs());
    }
    send(event);
  }

  /**
   * The rest of choice {@code i}'s text (its thinking: {@code thought}) that its chunks did not
   * bring, then its finish reason.
   */
  private void finish(int i, Completion c, String thought) throws IOException {
    String content = rest(sent[i], c.getText());
    if (!content.isEmpty() || !thought.isEmpty()) {
      ObjectNode event =
          OpenAiResponses.delta(
              chat, id, model, created, i, content.isEmpty() ? null : content, false, null);
      send(withThought(event, i, thought));
    }
    send(
        OpenAiResponses.delta(
            chat, id, model, created, i, null, false, OpenAiResponses.finishReason(c)));
  }

  /**
   * With tools: the chunk's text goes out only as far as it is surely content (or, for a named
   * function, as more of its arguments); the rest waits for the completion.
   */
  private void toolChunk(int i, CompletionChunk c, Split s) throws IOException {
    generated[i].append(s.content());
    ObjectNode event = release(i);
    if (s.reasoning() != null && !s.reasoning().isEmpty()) {
      if (event == null) {
        event = OpenAiResponses.delta(chat, id, model, created, i, null, false, null);
      }
      withThought(event, i, s.reasoning());
    }
    if (logprobs && !c.getTokenIds().isEmpty()) {
      if (event == null) {
        event = OpenAiResponses.delta(chat, id, model, created, i, null, false, null);
      }
      ((ObjectNode) event.at("/choices/0")).set("logprobs", chunks[i].lastLogprobs());
    }
    if (event != null) {
      send(event);
    }
  }

  /**
   * The event that sends what of choice {@code i}'s answer may go out now and has not, or null: its
   * content as far as it is surely content (none with a forced call), then its calls as far as the
   * text has them.
   */
  private ObjectNode release(int i) {
    String text = generated[i].toString();
    ObjectNode event = null;
    if (!tools.forced()) {
      // Content without the blanks at its ends (cut when calls follow) until more content comes.
      int end = tools.holdFrom(text);
      while (end > 0 && Character.isWhitespace(text.charAt(end - 1))) {
        end--;
      }
      int from = released[i];
      while (from < end && released[i] == 0 && Character.isWhitespace(text.charAt(from))) {
        from++;
      }
      if (end > from) {
        String more = text.substring(from, end);
        sent[i].append(more);
        released[i] = end;
        event = OpenAiResponses.delta(chat, id, model, created, i, more, false, null);
      }
    }
    return withCalls(event, i, tools.callsSoFar(text));
  }

  /**
   * {@code event} (null: a new one, if there is anything to send) with what of choice {@code i}'s
   * {@code calls} has not gone out: a call first with its index, id and name, then its arguments as
   * they grow; or null if nothing.
   */
  private ObjectNode withCalls(ObjectNode event, int i, List<ToolCall> calls) {
    List<Integer> sentLengths = sentArguments.get(i);
    ArrayNode deltas = JSON.createArrayNode();
    for (int k = 0; k < calls.size(); k++) {
      String arguments = calls.get(k).arguments();
      if (k == sentLengths.size()) {
        ObjectNode call = deltas.addObject().put("index", k);
        call.put("id", ToolCall.idFor(choices.ids().get(i), k)).put("type", "function");
        call.putObject("function").put("name", calls.get(k).name()).put("arguments", arguments);
        sentLengths.add(arguments.length());
      } else if (arguments.length() > sentLengths.get(k)) {
        ObjectNode call = deltas.addObject().put("index", k);
        call.putObject("function").put("arguments", arguments.substring(sentLengths.get(k)));
        sentLengths.set(k, arguments.length());
      }
    }
    if (deltas.isEmpty()) {
      return event;
    }
    if (event == null) {
      event = OpenAiResponses.delta(chat, id, model, created, i, null, false, null);
    }
    ((ObjectNode) event.at("/choices/0/delta")).set("tool_calls", deltas);
    return event;
  }

  /**
   * With tools: what of the answer did not go out. Content that follows streamed calls goes after
   * the rest of them.
   */
  private void toolFinish(int i, Completion c, String thought) throws IOException {
    if (!thought.isEmpty()) {
      send(
          withThought(
              OpenAiResponses.delta(chat, id, model, created, i, null, false, null), i, thought));
    }
    Tools.Answer a = tools.answer(c);
    if (tools.forced()) {
      generated[i].setLength(0);
      generated[i].append(c.getText());
      ObjectNode rest = release(i);
      if (rest != null) {
        send(rest);
      }
    } else {
      boolean callsFirst = !sentArguments.get(i).isEmpty();
      String content = rest(sent[i], a.content());
      ObjectNode calls = withCalls(null, i, a.calls());
      if (calls != null && callsFirst) {
        send(calls);
      }
      if (!content.isEmpty()) {
        send(OpenAiResponses.delta(chat, id, model, created, i, content, false, null));
      }
      if (calls != null && !callsFirst) {
        send(calls);
      }
    }
    send(OpenAiResponses.delta(chat, id, model, created, i, null, false, a.finishReason()));
  }

  /** {@code event} carrying more of choice {@code i}'s thinking, when there is more. */
  private ObjectNode withThought(ObjectNode event, int i, String thought) {
    if (!thought.isEmpty()) {
      sentReasoning[i].append(thought);
      ((ObjectNode) event.at("/choices/0/delta")).put("reasoning_content", thought);
    }
    return event;
  }

  /** What of {@code whole} (null: nothing) follows what was {@code sent}; "" if it does not. */
  private static String rest(StringBuilder sent, String whole) {
    String already = sent.toString();
    return whole != null && whole.startsWith(already) ? whole.substring(already.length()) : "";
  }

  /** Choice {@code i}'s prompt text, with its log-probabilities where they were all taken. */
  private void sendEcho(int i) throws IOException {
    echoSent[i] = true;
    ObjectNode event = OpenAiResponses.delta(false, id, model, created, i, echoes[i], false, null);
    if (logprobs && chunks[i].promptComplete()) {
      ((ObjectNode) event.at("/choices/0")).set("logprobs", chunks[i].logprobs().deepCopy());
    }
    send(event);
  }

  /**
   * Sends {@code event}; the first event of a choice whose {@code prompt_logprobs} were asked for
   * carries them once they are all here (vLLM's places: each completion choice's, the chat
   * chunk's).
   */
  private void send(ObjectNode event) throws IOException {
    JsonNode index = event.at("/choices/0/index");
    if (prompts != null && index.isInt() && !promptSent[index.asInt()]) {
      int i = index.asInt();
      ArrayNode scored = promptLens[i] < 0 ? null : prompts[i].of(promptLens[i]);
      if (scored != null || event.at("/choices/0/finish_reason").isTextual()) {
        promptSent[i] = true;
        (chat ? event : (ObjectNode) event.at("/choices/0")).set("prompt_logprobs", scored);
      }
    }
    sink.send(out, event);
  }
}
