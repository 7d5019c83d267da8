package io.flinfer.operators.flink;

import io.flinfer.operators.engine.Engine;
import io.flinfer.operators.engine.EngineConfig;
import io.flinfer.operators.engine.EngineStats;
import io.flinfer.operators.engine.FinishReason;
import io.flinfer.operators.engine.Req;
import io.flinfer.operators.engine.TokenEvent;
import io.flinfer.operators.flink.state.InFlightSerializer;
import io.flinfer.operators.request.RequestValidator;
import io.flinfer.runtime.chat.ReasoningParsers;
import io.flinfer.runtime.forward.ModelRunners;
import io.flinfer.runtime.model.LlamaModel;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.annotation.VisibleForTesting;
import org.apache.flink.api.common.operators.MailboxExecutor;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.apache.flink.runtime.state.StateSnapshotContext;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.BoundedOneInput;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The keyed inference operator: one continuous-batching {@link Engine} per subtask, run on the
 * task's own thread. {@code processElement} only submits; engine steps run as mails in the task's
 * mailbox, so input and checkpoint barriers interleave with steps and a barrier waits at most one
 * step. When the engine's queue is full the operator runs steps until there is room, so input stops
 * being consumed and backpressure reaches Kafka. At the end of a bounded input (an offline replay)
 * every request still in flight is served to its end.
 *
 * <p>In-flight requests (the request and its generated tokens) are keyed state, written in {@link
 * #snapshotState}; the KV cache is not. On restore they re-enter the engine and, generation being
 * deterministic, continue exactly as an uninterrupted job would.
 */
public class InferenceOperator extends AbstractStreamOperator<TokenOutput>
    implements OneInputStreamOperator<TokenizedPrompt, TokenOutput>, BoundedOneInput {
  private static final Logger LOG = LoggerFactory.getLogger(InferenceOperator.class);

  static final String STATE = "in-flight";

  /** How long an idle engine waits for more requests before its first step. */
  static final long ADMISSION_WINDOW_MILLIS = 5;

  private final InferenceSettings settings;
  private transient Engine engine;
  private transient ReasoningParsers reasoningParsers; // the model template's, by switches
  private transient MapState<String, InFlight> state;
  private transient Map<String, TokenizedPrompt> live;
  private transient Map<String, List<Integer>> generated;
  private transient PendingOutputs outputs;
  private transient ArrayDeque<InFlight> backlog;
  private transient boolean stepScheduled;
  private transient InferenceMetrics metrics;
  private transient MailboxExecutor mailbox;

  /** Per request: when it entered the engine, then when its last token left. */
  private transient Map<String, Long> lastTime;

  /** Per request: when it entered the engine. */
  private transient Map<String, Long> startTime;

  public InferenceOperator(InferenceSettings settings) {
    this.settings = settings;
  }

  @Override
  public void open() throws Exception {
    super.open();
    LlamaModel model = settings.model().load();
    EngineConfig config = settings.engine();
    engine = new Engine(model, config, ModelRunners.byName(backend()));
    reasoningParsers = new ReasoningParsers(model.chatTemplate().orElse(null));
    LOG.info(
        "{} engine on {}: KV pool of {} tokens in {} ({}), {} running requests at most",
        model.id(),
        engine.backendName(),
        engine.poolSize(),
        engine.kvStoreType(),
        config.maxTotalTokens() > 0 ? "configured" : "sized from memory",
        config.maxRunningRequests());
    if (config.speculative() != null) {
      LOG.info("speculative decoding by n-gram lookup: {}", config.speculative());
    }
    for (String w : engine.warnings()) {
      LOG.warn("{}", w);
    }
    state =
        getPartitionedState(
            new MapStateDescriptor<>(STATE, StringSerializer.INSTANCE, new InFlightSerializer()));
    live = new HashMap<>();
    generated = new HashMap<>();
    outputs = new PendingOutputs(settings.streamIntervalMillis());
    lastTime = new HashMap<>();
    startTime = new HashMap<>();
    backlog = new ArrayDeque<>();
    metrics = new InferenceMetrics(getMetricGroup(), model.id(), engine.stats());
    restore();
  }

  /** The engine's statistics now. */
  @VisibleForTesting
  EngineStats engineStats() {
    return engine.stats();
  }

  /** The task's mailbox: back-to-back steps are its mails, with no timer thread in between. */
  @Override
  public void setMailboxExecutor(MailboxExecutor mailboxExecutor) {
    super.setMailboxExecutor(mailboxExecutor);
    this.mailbox = mailboxExecutor;
  }

  /** The backend of this subtask: see {@link SlotBackend}. */
  private String backend() {
    return SlotBackend.choose(
        settings.backend(), getRuntimeContext().getExternalResourceInfos(SlotBackend.GPU_RESOURCE));
  }

  /** Re-submits the requests in this subtask's keyed state (after a failure or a rescale). */
  private void restore() throws Exception {
    List<Object> keys = new ArrayList<>();
    getKeyedStateBackend().getKeys(STATE, VoidNamespace.INSTANCE).forEach(keys::add);
    for (Object key : keys) {
      setCurrentKey(key);
      for (Map.Entry<String, InFlight> e : state.entries()) {
        InFlight f = e.getValue();
        track(f.prompt, f.generated);
        backlog.add(f);
      }
    }
    drainBacklog();
    scheduleStep();
  }

  /**
   * Hands restored requests to the engine as far as it takes them; the rest wait here (and stay in
   * the snapshots) until steps make room, ahead of any new input.
   */
  private void drainBacklog() {
    while (!backlog.isEmpty() && engine.canAccept()) {
      InFlight f = backlog.poll();
      submitToEngine(f.prompt, f.generated);
    }
  }

  @Override
  public void processElement(StreamRecord<TokenizedPrompt> element) throws Exception {
    TokenizedPrompt p = element.getValue();
    if (live.containsKey(p.request.getRequestId())) {
      return; // a replayed record of a request already in flight
    }
    // Backpressure: while the engine takes nothing more, steps run here and no input is read.
    while (!backlog.isEmpty() || !engine.canAccept()) {
      runStep();
    }
    track(p, new int[0]);
    submitToEngine(p, new int[0]);
    scheduleStep();
  }

  private void track(TokenizedPrompt p, int[] done) {
    String id = p.request.getRequestId();
    List<Integer> tokens = new ArrayList<>();
    for (int t : done) {
      tokens.add(t);
    }
    live.put(id, p);
    generated.put(id, tokens);
    lastTime.put(id, System.currentTimeMillis());
    startTime.put(id, System.currentTimeMillis());
  }

  private void submitToEngine(TokenizedPrompt p, int[] done) {
    Req req =
        RequestValidator.toReq(
            p.request,
            p.promptIds,
            p.seed,
            done,
            RequestValidator.thinking(p.request, reasoningParsers));
    if (!engine.submit(req)) {
      throw new IllegalStateException("the engine refused " + req.id() + " after accepting input");
    }
  }

  /**
   * Schedules the next engine step. From idle, it waits a short admission window so that a burst of
   * requests arriving together is prefilled as one batch (as a scheduler draining its queue would);
   * while requests run, steps follow each other at once and new arrivals join the next.
   */
  private void scheduleStep() {
    scheduleStep(engine.stats().runningRequests() == 0 ? ADMISSION_WINDOW_MILLIS : 0);
  }

  private void scheduleStep(long delayMillis) {
    if (stepScheduled || !hasWork()) {
      return;
    }
    stepScheduled = true;
    if (delayMillis == 0) {
      // The mailbox runs one input record (or barrier) between two mails, as it would between two
      // timers, but the next step is queued on this thread: no timer thread wakes for it.
      mailbox.execute(this::scheduledStep, "engine step");
    } else {
      long now = getProcessingTimeService().getCurrentProcessingTime();
      getProcessingTimeService().registerTimer(now + delayMillis, t -> scheduledStep());
    }
  }

  private void scheduledStep() throws Exception {
    stepScheduled = false;
    if (hasWork()) {
      runStep();
    }
    // Queued requests go on at once; the window is only for arrivals at an idle engine.
    scheduleStep(0);
  }

  private boolean hasWork() {
    return engine.hasWork() || !backlog.isEmpty();
  }

  /**
   * The end of a bounded input (an offline replay): every request in flight is served to its end.
   */
  @Override
  public void endInput() throws Exception {
    while (hasWork()) {
      runStep();
    }
    emitHeld();
  }

  private void runStep() throws Exception {
    drainBacklog();
    List<TokenEvent> events = engine.step();
    metrics.afterStep(engine.stats());
    long now = getProcessingTimeService().getCurrentProcessingTime();
    for (TokenEvent e : events) {
      String id = e.requestId();
      TokenizedPrompt p = live.get(id);
      if (p == null) {
        continue;
      }
      if (e.index() >= 0) {
        outputs.add(p, e.index(), e.tokenId(), e.logprob(), e.topIds(), e.topLogprobs(), now);
        if (e.promptLogprobs() != null) {
          outputs.promptLogprobs(id, e.promptLogprobs());
        }
        generated.get(id).add(e.tokenId());
        Long before = lastTime.put(id, now);
        if (before != null) {
          if (e.index() == 0) {
            metrics.firstToken(now - before);
            // The engine reports how long the request waited inside it for its first batch.
            long admitted = before + e.queuedMillis();
            outputs.timeFirstToken(
                id, Math.max(0, admitted - p.recordTimestampMillis), now - before);
          } else {
            metrics.nextToken(now - before);
          }
        }
      }
      if (e.isLast()) {
        FinishReason f = e.finish();
        live.remove(id);
        generated.remove(id);
        lastTime.remove(id);
        Long started = startTime.remove(id);
        if (started != null) {
          metrics.finished(now - started);
        }
        setCurrentKey(p.routingKey);
        state.remove(id);
        output.collect(
            new StreamRecord<>(
                outputs.finish(
                    p, f.type().name().toLowerCase(), f.detail(), e.cachedTokens(), now)));
      }
    }
    emit(outputs.takeDue(now, false));
  }

  private void emit(List<TokenOutput> due) {
    for (TokenOutput o : due) {
      output.collect(new StreamRecord<>(o));
    }
  }

  /**
   * Held tokens leave before the barrier: a snapshot then holds no token that was generated but not
   * sent, and a restore neither repeats nor loses one.
   */
  @Override
  public void prepareSnapshotPreBarrier(long checkpointId) throws Exception {
    super.prepareSnapshotPreBarrier(checkpointId);
    emitHeld();
  }

  /** Sends every token held back by the stream interval. */
  private void emitHeld() {
    emit(outputs.takeDue(getProcessingTimeService().getCurrentProcessingTime(), true));
  }

  @Override
  public void snapshotState(StateSnapshotContext context) throws Exception {
    super.snapshotState(context);
    for (Map.Entry<String, TokenizedPrompt> e : live.entrySet()) {
      setCurrentKey(e.getValue().routingKey);
      int[] done = generated.get(e.getKey()).stream().mapToInt(Integer::intValue).toArray();
      state.put(e.getKey(), new InFlight(e.getValue(), done));
    }
  }

  @Override
  public void close() throws Exception {
    if (engine != null) {
      engine.close();
    }
    super.close();
  }
}
