package io.flinfer.operators.predict;

import io.flinfer.avro.PromptRequest;
import io.flinfer.operators.detokenize.IncrementalDetokenizer;
import io.flinfer.operators.engine.Engine;
import io.flinfer.operators.engine.EngineConfig;
import io.flinfer.operators.engine.FinishReason;
import io.flinfer.operators.engine.TokenEvent;
import io.flinfer.operators.flink.ModelSource;
import io.flinfer.operators.request.RequestLimits;
import io.flinfer.operators.request.RequestValidator;
import io.flinfer.runtime.chat.ReasoningParser;
import io.flinfer.runtime.chat.ReasoningParsers;
import io.flinfer.runtime.chat.ToolCallFormat;
import io.flinfer.runtime.forward.ModelRunners;
import io.flinfer.runtime.grammar.ResponseFormat;
import io.flinfer.runtime.model.LlamaModel;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * One continuous-batching engine shared by every caller in the JVM that asks for the same model and
 * settings: each {@link #submit} joins the running batch and shares the radix cache, and its future
 * completes with the whole completion. The engine runs on a thread of its own; callers never block.
 * Shared instances are counted: the last {@link #release} stops the thread and frees the pools.
 */
public final class PredictionEngine {
  /** What makes two callers share an engine. */
  public record Key(ModelSource model, EngineConfig config, String backend, RequestLimits limits)
      implements java.io.Serializable {}

  private static final Map<Key, PredictionEngine> SHARED = new HashMap<>();

  private final Key key;
  private final LinkedBlockingQueue<Submitted> incoming = new LinkedBlockingQueue<>();
  private final Thread driver;
  private int users;
  private volatile boolean stopped;

  /** Why the engine stopped serving (it failed to load or failed mid-step), or null. */
  private volatile String broken;

  private record Submitted(PromptRequest request, CompletableFuture<Prediction> result) {}

  /** A request in the engine: its text so far and who waits for it. */
  private static final class Running {
    final IncrementalDetokenizer text;
    final int promptTokens;
    final ReasoningParser reasoning; // null: the text is all answer
    final ToolCallFormat calls; // null: no tools
    final String callIds;
    final CompletableFuture<Prediction> result;
    int tokens;
    float[] promptLogprobs;

    Running(
        IncrementalDetokenizer text,
        int promptTokens,
        ReasoningParser reasoning,
        ToolCallFormat calls,
        String callIds,
        CompletableFuture<Prediction> result) {
      this.text = text;
      this.promptTokens = promptTokens;
      this.reasoning = reasoning;
      this.calls = calls;
      this.callIds = callIds;
      this.result = result;
    }
  }

  private PredictionEngine(Key key) {
    this.key = key;
    this.driver = new Thread(this::drive, "flinfer-predict");
    driver.setDaemon(true);
    driver.start();
  }

  /** The shared engine for {@code key}, started on first use. */
  public static synchronized PredictionEngine acquire(Key key) {
    PredictionEngine e = SHARED.computeIfAbsent(key, PredictionEngine::new);
    e.users++;
    return e;
  }

  /** Gives this engine back; the last user stops it. */
  public void release() {
    synchronized (PredictionEngine.class) {
      if (--users > 0) {
        return;
      }
      SHARED.remove(key);
    }
    stopped = true;
    driver.interrupt();
  }

  /**
   * Queues a prompt. Its id is replaced by a fresh one: rows of a table need not have ids, and two
   * equal rows are two requests. A prompt the model cannot take completes with an error.
   */
  public CompletableFuture<Prediction> submit(PromptRequest request) {
    CompletableFuture<Prediction> f = new CompletableFuture<>();
    PromptRequest withId =
        PromptRequest.newBuilder(request).setRequestId(UUID.randomUUID().toString()).build();
    incoming.add(new Submitted(withId, f));
    if (broken != null) {
      failAll(broken); // nothing drains the queue any more
    }
    return f;
  }

  private void drive() {
    LlamaModel model;
    Engine engine;
    try {
      model = key.model().load();
      engine = new Engine(model, key.config(), ModelRunners.byName(key.backend()));
    } catch (RuntimeException e) {
      broken = "the model did not load: " + e.getMessage();
      failAll(broken);
      return;
    }
    RequestValidator validator = RequestValidator.forModel(model, key.limits(), Set.of());
    ReasoningParsers parsers = new ReasoningParsers(model.chatTemplate().orElse(null));
    ToolCallFormat calls =
        model.chatTemplate().map(ToolCallFormat::of).orElse(ToolCallFormat.UNKNOWN);
    Map<String, Running> running = new HashMap<>();
    ArrayDeque<Submitted> held = new ArrayDeque<>();
    try (engine) {
      while (!stopped) {
        Submitted s =
            held.isEmpty() && !engine.hasWork()
                ? incoming.poll(100, TimeUnit.MILLISECONDS)
                : incoming.poll();
        for (; s != null; s = incoming.poll()) {
          held.add(s);
        }
        while (!held.isEmpty() && engine.canAccept()) {
          admit(held.poll(), engine, validator, model, parsers, calls, running);
        }
        if (engine.hasWork()) {
          for (TokenEvent t : engine.step()) {
            advance(t, running);
          }
        }
      }
    } catch (InterruptedException e) {
      // released
    } catch (RuntimeException e) {
      broken = e.toString();
      running.values().forEach(r -> r.result.complete(Prediction.failed(broken)));
      held.forEach(h -> h.result().complete(Prediction.failed(broken)));
      failAll(broken);
    }
  }

  private static void admit(
      Submitted s,
      Engine engine,
      RequestValidator validator,
      LlamaModel model,
      ReasoningParsers parsers,
      ToolCallFormat calls,
      Map<String, Running> running) {
    RequestValidator.Outcome o = validator.validate(s.request(), System.currentTimeMillis());
    if (!o.ok()) {
      s.result().complete(Prediction.failed(o.rejection().code() + ": " + o.error()));
      return;
    }
    int[] ids = o.request().promptIds();
    PromptRequest r = s.request();
    boolean withCalls =
        r.getTools() != null && ResponseFormat.TEXT.wireName().equals(r.getResponseFormat());
    // Call ids from what the row asked, not from its request id, which is fresh every time.
    String callIds =
        withCalls
            ? Long.toString(RequestValidator.seedOf(r.getMessages() + "\n" + r.getTools()), 16)
            : null;
    running.put(
        s.request().getRequestId(),
        new Running(
            new IncrementalDetokenizer(
                model.tokenizer(), ids[ids.length - 1], List.copyOf(s.request().getStop())),
            ids.length,
            s.request().getMessages() == null
                ? null
                : parsers.forKwargs(s.request().getChatTemplateKwargs()).orElse(null),
            withCalls ? calls : null,
            callIds,
            s.result()));
    engine.submit(o.request().req());
  }

  private static void advance(TokenEvent t, Map<String, Running> running) {
    Running r = running.get(t.requestId());
    if (r == null) {
      return;
    }
    if (t.promptLogprobs() != null) {
      r.promptLogprobs = t.promptLogprobs().logprobs();
    }
    if (t.index() >= 0) {
      r.tokens++;
      r.text.next(t.tokenId());
    }
    if (!t.isLast()) {
      return;
    }
    running.remove(t.requestId());
    FinishReason f = t.finish();
    if (f.type() == FinishReason.Type.ERROR || f.type() == FinishReason.Type.ABORT) {
      r.result.complete(Prediction.failed(f.detail()));
      return;
    }
    r.text.finish();
    String reason = r.text.stopped() || f.type() == FinishReason.Type.STOP ? "stop" : "length";
    r.result.complete(
        Prediction.of(
            r.text.text(),
            reason,
            r.promptTokens,
            r.tokens,
            r.reasoning,
            r.calls,
            r.callIds,
            r.promptLogprobs));
  }

  private void failAll(String error) {
    for (Submitted s = incoming.poll(); s != null; s = incoming.poll()) {
      s.result().complete(Prediction.failed(error));
    }
  }
}
