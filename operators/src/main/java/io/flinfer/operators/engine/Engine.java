package io.flinfer.operators.engine;

import io.flinfer.memcache.KvStoreType;
import io.flinfer.memcache.PagedTokenToKvPoolAllocator;
import io.flinfer.memcache.ReqToTokenPool;
import io.flinfer.memcache.SimpleTokenToKvPoolAllocator;
import io.flinfer.memcache.TokenToKvPoolAllocator;
import io.flinfer.memcache.prefix.ChunkCache;
import io.flinfer.memcache.prefix.HiRadixCache;
import io.flinfer.memcache.prefix.PrefixCache;
import io.flinfer.memcache.prefix.PrefixMatch;
import io.flinfer.memcache.prefix.RadixCache;
import io.flinfer.runtime.forward.CpuModelRunner;
import io.flinfer.runtime.forward.ForwardBatch;
import io.flinfer.runtime.forward.Logits;
import io.flinfer.runtime.forward.ModelRunner;
import io.flinfer.runtime.forward.ModelRunnerFactory;
import io.flinfer.runtime.grammar.OutputConstraint;
import io.flinfer.runtime.grammar.ThoughtBudget;
import io.flinfer.runtime.model.LlamaModel;
import io.flinfer.runtime.model.ModelConfig;
import io.flinfer.runtime.sampling.Sampler;
import io.flinfer.runtime.sampling.TokenMasks;
import io.flinfer.runtime.tokenizer.TextDecoder;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The continuous-batching engine (SGLang's scheduler, without Flink): a bounded waiting queue,
 * prefix-aware prefill batches with chunked prefill, decode steps over the running batch with
 * retraction under memory pressure, and token events. Owns the KV pools, the prefix cache and the
 * backend. Not thread-safe: one thread calls {@link #submit}, {@link #abort} and {@link #step}.
 *
 * <p>A request's tokens depend only on its own prompt, sampling parameters and seed: the kernels
 * give each token the same arithmetic whatever the batch, chunking or cache state, and sampling
 * draws token i from (seed, i).
 */
public final class Engine implements AutoCloseable {

  private final EngineConfig config;
  private final LlamaModel model;
  private final int vocab;
  private final int contextLength;
  private final ReqToTokenPool reqToToken;
  private final TokenToKvPoolAllocator allocator;
  private final PrefixCache cache;

  /** The cache when it has tiers below the pool; null otherwise. */
  private final HiRadixCache tiered;

  private final ModelRunner runner;
  private final KvStoreType kvStoreType;
  private final Sampler sampler;
  private final TokenMasks masks;
  private static final int[] NO_TOKENS = {};
  private final List<Req> waiting = new ArrayList<>();
  private final List<Req> running = new ArrayList<>();
  private final Map<String, Req> live = new HashMap<>();
  private final List<TokenEvent> pending = new ArrayList<>();
  private final List<String> warnings = new ArrayList<>();
  private final ForwardBatch fb = new ForwardBatch();
  private List<Req> batch = List.of();
  private final Logits logits;
  private Req chunked;
  private final NewTokenRatio newTokenRatio;
  private final int[] endTokens;
  private long cacheHitTokens;
  private long evictedTokens;
  private int stepEvicted;
  private int stepShortfall;
  private int stepExcess;
  private long retractions;
  private long prefillTokens;
  private long decodeTokens;
  private long steps;
  private long forwardNanos;
  private long schedulerNanos;

  /** Speculative decoding's settings; null where it is off or the backend cannot verify. */
  private final SpeculativeConfig speculative;

  /** Finished requests' outputs, to draft from; null without speculation. */
  private final NgramIndex finishedOutputs;

  private long draftTokens;
  private long acceptedDraftTokens;

  /** The KV slots of refused draft positions, gathered to be freed. */
  private final int[] refusedSlots = new int[SpeculativeConfig.MAX_DRAFT_TOKENS + 1];

  /** Requests submitted with a deadline so far; once there is one, each step scans the live. */
  private long withDeadlines;

  public static Engine create(LlamaModel model, EngineConfig config) {
    return new Engine(model, config, CpuModelRunner::new);
  }

  public Engine(LlamaModel model, EngineConfig config, ModelRunnerFactory runners) {
    this.config = config;
    this.model = model;
    ModelConfig c = model.config();
    this.vocab = c.vocabSize();
    this.contextLength = c.contextLength();
    int pageSize = config.pageSize();
    this.reqToToken = new ReqToTokenPool(config.maxRunningRequests(), contextLength);
    this.runner = runners.create(model, reqToToken, config.threads());
    try {
      KvStoreType kvType =
          config.kvStoreType() != null ? config.kvStoreType() : runner.kvStoreTypes().get(0);
      if (!runner.kvStoreTypes().contains(kvType)) {
        throw new IllegalArgumentException(
            "the "
                + runner.backendName()
                + " backend stores KV as "
                + runner.kvStoreTypes()
                + ", not "
                + kvType);
      }
      this.kvStoreType = kvType;
      int tokens =
          PoolSizing.poolTokens(
              c, config, kvType, runner::memory, runner.defaultMemFractionStatic(), warnings);
      this.allocator =
          pageSize == 1
              ? new SimpleTokenToKvPoolAllocator(tokens)
              : new PagedTokenToKvPoolAllocator(tokens, pageSize);
      runner.allocateKv(allocator.size(), pageSize, kvType);
    } catch (RuntimeException e) {
      runner.close();
      throw e;
    }
    if (config.hiCache() != null) {
      if (runner.kvSlotBytes() == null) {
        runner.close();
        throw new IllegalArgumentException(
            "the " + runner.backendName() + " backend cannot copy its KV to a host tier");
      }
      this.tiered =
          new HiRadixCache(
              reqToToken,
              allocator,
              runner.kvSlotBytes(),
              config.hiCache(),
              KvSalt.of(model, kvStoreType, pageSize));
      this.cache = tiered;
    } else {
      this.tiered = null;
      this.cache =
          config.radixCache()
              ? new RadixCache(reqToToken, allocator)
              : new ChunkCache(reqToToken, allocator);
    }
    this.sampler = new Sampler(vocab);
    this.masks = new TokenMasks(model.tokenizer(), vocab);
    this.logits = new Logits(vocab);
    this.newTokenRatio = new NewTokenRatio(config);
    this.endTokens = model.tokenizer().endTokens();
    fb.positionSink(this::scorePosition);
    SpeculativeConfig spec = config.speculative();
    if (spec != null && !runner.scoresPositions()) {
      // Verifying a draft reads the logits at each of its positions.
      warnings.add(
          "speculative decoding is off: the "
              + runner.backendName()
              + " backend does not hand over the logits of draft positions");
      spec = null;
    }
    this.speculative = spec;
    this.finishedOutputs = spec == null ? null : NgramIndex.of(spec);
  }

  public EngineConfig config() {
    return config;
  }

  public LlamaModel model() {
    return model;
  }

  /** Sizing warnings from start-up. */
  public List<String> warnings() {
    return List.copyOf(warnings);
  }

  /** How the KV cache stores values (the configured type, or the backend's default). */
  public KvStoreType kvStoreType() {
    return kvStoreType;
  }

  /** The backend's name ("cpu", "cuda"). */
  public String backendName() {
    return runner.backendName();
  }

  /** KV tokens in the pool. */
  public int poolSize() {
    return allocator.size();
  }

  /**
   * Whether {@link #submit} would take another request now: not while the waiting queue is full,
   * nor while the requests already waiting need as many KV tokens as the whole pool holds (the pool
   * is under pressure, and more input would only queue in memory).
   */
  public boolean canAccept() {
    if (waiting.size() >= config.waitingQueueCapacity()) {
      return false;
    }
    long demand = 0;
    for (Req r : waiting) {
      demand += r.promptLen() + r.outputLen();
    }
    return demand < allocator.size();
  }

  public boolean hasWork() {
    return !waiting.isEmpty() || !running.isEmpty() || chunked != null || !pending.isEmpty();
  }

  /**
   * Queues a request. Returns false (taking nothing) when {@link #canAccept} says no, so the caller
   * can hold back input. A request that can never be served is taken and ends at the next step with
   * an error event. A request restored with generated tokens rebuilds everything derived from them
   * (the text its stop strings are matched in) from the tokens themselves.
   */
  public boolean submit(Req r) {
    if (live.containsKey(r.id())) {
      throw new IllegalArgumentException("request " + r.id() + " is already in the engine");
    }
    if (!canAccept()) {
      return false;
    }
    r.queuedNanos = System.nanoTime();
    int prompt = r.promptLen();
    if (prompt >= contextLength) {
      endBeforeStart(
          r,
          FinishReason.error(
              "the prompt has " + prompt + " tokens; the context holds " + contextLength));
      return true;
    }
    if (prompt >= allocator.size()) {
      endBeforeStart(
          r,
          FinishReason.error(
              "the prompt has " + prompt + " tokens; the KV pool holds " + allocator.size()));
      return true;
    }
    // The pool holds whole pages: the prompt's last page takes room from the output.
    int poolRoom = allocator.size() - allocator.slotsNeededForExtend(0, prompt);
    r.effectiveMaxNewTokens =
        Math.min(r.maxNewTokens(), Math.min(contextLength - prompt, poolRoom));
    if (r.outputLen() >= r.effectiveMaxNewTokens) {
      endBeforeStart(r, FinishReason.length("already at its token limit"));
      return true;
    }
    if (r.promptLogprobs() >= 0) {
      if (!runner.scoresPositions()) {
        endBeforeStart(
            r,
            FinishReason.error(
                "the " + runner.backendName() + " backend does not compute prompt logprobs"));
        return true;
      }
      // A restored request with outputs sent its prompt's with its first token.
      r.scores =
          r.outputLen() == 0
              ? new PromptScores(prompt, r.promptLogprobs(), r.promptLogprobsStart())
              : null;
    }
    r.constraint = masks.constraint(r.params());
    for (int i = prompt; i < r.len && r.constraint != null; i++) {
      if (!r.constraint.advance(r.tokens[i])) {
        endBeforeStart(r, FinishReason.error("its tokens so far do not start its response format"));
        return true;
      }
    }
    if (r.constraint != null && r.constraint.isComplete()) {
      endBeforeStart(r, FinishReason.stop(r.params().responseFormat().completeDetail()));
      return true;
    }
    r.budget = masks.budget(r.params());
    for (int i = prompt; i < r.len && r.budget != null; i++) {
      r.budget.advance(r.tokens[i]);
    }
    if (!r.stopStrings().isEmpty()) {
      r.decoder = new TextDecoder(model.tokenizer(), r.tokens[prompt - 1]);
      r.text = new StringBuilder();
      for (int i = prompt; i < r.len; i++) {
        StopStrings.feed(r, r.tokens[i], i - prompt + 1);
      }
    }
    live.put(r.id(), r);
    waiting.add(r);
    if (r.deadlineEpochMillis() > 0) {
      withDeadlines++;
    }
    return true;
  }

  private void endBeforeStart(Req r, FinishReason reason) {
    r.finish = reason;
    pending.add(TokenEvent.end(r.id(), reason, 0));
  }

  /** Ends a request at once, freeing everything it holds. Returns false if it is not here. */
  public boolean abort(String requestId) {
    return abort(requestId, FinishReason.abort());
  }

  /** Ends a waiting or running request with {@code reason}, freeing everything it holds. */
  private boolean abort(String requestId, FinishReason reason) {
    Req r = live.remove(requestId);
    if (r == null) {
      return false;
    }
    if (!waiting.remove(r)) {
      // Its computed K/V goes to the cache like a finished request's.
      cache.cacheFinishedReq(r.cache, r.tokens, r.computedLen);
      running.remove(r);
      if (chunked == r) {
        chunked = null;
      }
    }
    endBeforeStart(r, reason);
    return true;
  }

  /** Aborts every request whose deadline is not after {@code nowMillis}. */
  private void abortExpired(long nowMillis) {
    List<Req> expired = new ArrayList<>();
    for (Req r : live.values()) {
      if (r.deadlineEpochMillis() > 0 && r.deadlineEpochMillis() <= nowMillis) {
        expired.add(r);
      }
    }
    for (Req r : expired) {
      abort(r.id(), FinishReason.abort("deadline " + r.deadlineEpochMillis() + " passed"));
    }
  }

  /**
   * One scheduler iteration: a prefill batch if one forms (with the running requests' next tokens
   * when mixing), else a decode step. Never throws for lack of KV memory: admission only takes what
   * eviction can make room for, and decoding retracts running requests when it must.
   */
  public List<TokenEvent> step() {
    long start = System.nanoTime();
    stepEvicted = 0;
    stepShortfall = 0;
    stepExcess = 0;
    if (withDeadlines > 0) {
      abortExpired(System.currentTimeMillis());
    }
    List<TokenEvent> events = new ArrayList<>(pending);
    pending.clear();
    boolean prefill = scheduleNewPrefill();
    int extendCount = prefill ? batch.size() : 0;
    if (prefill) {
      if (config.mixedChunk()) {
        mixRunning();
      }
    } else if (!scheduleDecode(events)) {
      schedulerNanos += System.nanoTime() - start;
      return events;
    }
    long f0 = System.nanoTime();
    runner.forward(fb, logits);
    long f1 = System.nanoTime();
    forwardNanos += f1 - f0;
    processResults(extendCount, events);
    steps++;
    schedulerNanos += (System.nanoTime() - start) - (f1 - f0);
    return events;
  }

  // ---- prefill ----

  /** Above this many waiting requests LPM ordering falls back to arrival order, as SGLang's. */
  static final int LPM_QUEUE_LIMIT = 128;

  private boolean scheduleNewPrefill() {
    if (waiting.isEmpty() && chunked == null) {
      return false;
    }
    if (running.size() >= config.maxRunningRequests() && chunked == null) {
      return false;
    }
    SchedulePolicy policy = config.schedulePolicy();
    if (policy == SchedulePolicy.LPM && waiting.size() > LPM_QUEUE_LIMIT) {
      policy = SchedulePolicy.FCFS;
    }
    boolean matchAll = config.radixCache() && policy != SchedulePolicy.FCFS;
    if (matchAll) {
      for (Req r : waiting) {
        match(r);
      }
    }
    List<Req> order = matchAll ? WaitingQueueOrder.sort(waiting, policy) : waiting;
    PrefillAdder adder =
        new PrefillAdder(
            cache,
            allocator,
            config.maxPrefillTokens(),
            config.chunkedPrefillSize(),
            newTokenRatio.value(),
            config.radixCache() && policy != SchedulePolicy.FCFS);
    for (Req r : running) {
      adder.reserveRunning(r);
    }
    Req continuing = chunked;
    if (continuing != null && !adder.addChunked(continuing)) {
      // No budget for the chunked request's next chunk: nothing new starts before it goes on.
      return false;
    }
    int freeSlots = reqToToken.availableSize();
    boolean loadedBack = false;
    for (Req r : order) {
      if (running.size() + adder.added.size() >= config.maxRunningRequests() || freeSlots == 0) {
        break;
      }
      if (!matchAll || loadedBack) {
        // A load back may have evicted what was matched before it.
        match(r);
      }
      if (tiered != null) {
        loadedBack |= loadBack(r, adder.remTotal());
        if (r.hostHitLength > 0 && (!running.isEmpty() || !adder.added.isEmpty())) {
          // Part of its prefix is still only on the host: the round had no room to load it. It
          // waits for room rather than computing that part again, and nobody passes it (so it is
          // not starved); an idle engine admits it anyway, to go on.
          break;
        }
      }
      PrefillAdder.Result res = adder.add(r);
      if (res == PrefillAdder.Result.FULL) {
        break;
      }
      if (res == PrefillAdder.Result.ADDED) {
        freeSlots--;
      }
    }
    if (adder.added.isEmpty()) {
      return false;
    }
    Set<Req> admitted = Collections.newSetFromMap(new IdentityHashMap<>());
    admitted.addAll(adder.added);
    waiting.removeIf(admitted::contains);
    chunked = adder.newChunked;
    return prepareExtend(adder.added);
  }

  /**
   * Brings the part of a request's prefix that only the host tier holds back to the device, as far
   * as {@code budget} KV tokens allow, and takes the longer match. Whether anything was loaded.
   */
  private boolean loadBack(Req r, long budget) {
    if (r.hostHitLength == 0 || budget <= 0) {
      return false;
    }
    int before = r.prefixLen;
    PrefixMatch m = tiered.loadBack(r.namespace(), r.tokens, matchLimit(r), budget);
    r.cache.setPrefix(m);
    r.prefixLen = m.length();
    r.hostHitLength = m.hostHitLength();
    return m.length() > before;
  }

  /**
   * How much of a request's tokens a cached prefix may cover: all but the last, whose logits the
   * step needs, and no position whose prompt log-probability is still to be read.
   */
  private static int matchLimit(Req r) {
    return r.scores == null ? r.len - 1 : Math.min(r.len - 1, r.scores.next());
  }

  /** Matches a waiting request's prefix in the cache. */
  private void match(Req r) {
    PrefixMatch m = cache.matchPrefix(r.namespace(), r.tokens, matchLimit(r));
    r.cache.setPrefix(m);
    r.prefixLen = m.length();
    r.hostHitLength = m.hostHitLength();
  }

  /**
   * Allocates the admitted requests' slots and builds the extend batch. Admission promised only
   * what evicting unlocked cache can free; should the allocator still come up short, the last
   * admitted requests wait for the next round (a running request is never retracted for them).
   */
  private boolean prepareExtend(List<Req> admitted) {
    List<Req> reqs = new ArrayList<>(admitted);
    while (!reqs.isEmpty()) {
      int need = 0;
      for (Req r : reqs) {
        int from = r.cache.reqPoolIdx() < 0 ? r.prefixLen : r.computedLen;
        need += allocator.slotsNeededForExtend(from, from + r.extendInputLen);
      }
      if (makeRoom(need)) {
        break;
      }
      unadmit(reqs.remove(reqs.size() - 1));
    }
    if (reqs.isEmpty()) {
      return false;
    }
    int n = reqs.size();
    int[] prefixLens = new int[n];
    int[] seqLens = new int[n];
    int[] lastLocs = new int[n];
    for (int i = 0; i < n; i++) {
      Req r = reqs.get(i);
      if (r.cache.reqPoolIdx() < 0) {
        int slot = reqToToken.allocOne();
        r.cache.setReqPoolIdx(slot);
        reqToToken.write(slot, 0, r.cache.prefixIndices());
        r.computedLen = r.prefixLen;
        if (r.cachedTokens < 0) {
          // First admission only: a retracted request finding its own tokens is no cache hit.
          r.cachedTokens = r.prefixLen;
          cacheHitTokens += r.prefixLen;
        }
        r.admittedNanos = System.nanoTime();
      }
      prefixLens[i] = r.computedLen;
      seqLens[i] = r.computedLen + r.extendInputLen;
      lastLocs[i] =
          r.computedLen > 0 ? reqToToken.get(r.cache.reqPoolIdx(), r.computedLen - 1) : -1;
    }
    int[] locs = allocator.allocExtend(prefixLens, seqLens, lastLocs);
    if (locs == null) {
      throw new IllegalStateException(
          "the allocator refused "
              + n
              + " extends after making room: free "
              + allocator.availableSize());
    }
    fb.reset();
    int off = 0;
    for (int i = 0; i < n; i++) {
      Req r = reqs.get(i);
      int slot = r.cache.reqPoolIdx();
      reqToToken.write(slot, prefixLens[i], locs, off, r.extendInputLen);
      fb.add(slot, prefixLens[i], r.tokens, prefixLens[i], r.extendInputLen, locs, off);
      if (r.scores != null) {
        // A chunk's last position is read from its row (processResults).
        fb.scorePositions(Math.max(0, r.scores.next() - prefixLens[i]));
      } else {
        Sampler.prepare(fb, r.params(), r.outputLen());
      }
      off += r.extendInputLen;
    }
    prefillTokens += off;
    batch = reqs;
    return true;
  }

  /** An admitted request that did not fit after all: back to waiting, or still chunked. */
  private void unadmit(Req r) {
    if (r.cache.reqPoolIdx() >= 0) {
      chunked = r; // a continuing chunked request keeps its row and lock
      return;
    }
    cache.decLockRef(r.cache.lastNode());
    r.cache.resetPrefix();
    r.prefixLen = 0;
    if (chunked == r) {
      chunked = null;
    }
    waiting.add(0, r);
  }

  // ---- decode ----

  /** Decode steps of headroom kept for each running request after retracting others (SGLang). */
  static final int RETRACT_DECODE_STEPS = 20;

  private boolean scheduleDecode(List<TokenEvent> events) {
    if (running.isEmpty()) {
      return false;
    }
    boolean retracted = false;
    if (!makeRoom(decodeSlotsNeeded())) {
      // Even with all unlocked cache evicted there is no room: retract the requests with the
      // least progress until the rest have some steps of headroom.
      while (running.size() > 1 && !makeRoom(RETRACT_DECODE_STEPS * running.size())) {
        retractOne();
        retracted = true;
      }
      if (!makeRoom(decodeSlotsNeeded())) {
        if (chunked != null) {
          retract(chunked);
          chunked = null;
          retracted = true;
        }
        if (!makeRoom(decodeSlotsNeeded())) {
          // Cannot happen: a lone request's limit keeps it within the pool. End it rather than
          // fail the step.
          Req r = running.remove(0);
          finish(r, FinishReason.length("the KV pool is full"), events);
          return !running.isEmpty() && scheduleDecode(events);
        }
      }
    }
    if (retracted) {
      newTokenRatio.afterRetraction(running);
    } else {
      newTokenRatio.decay();
    }
    fb.reset();
    batch = new ArrayList<>();
    draft();
    appendDecodes(decodeLastLocs());
    return true;
  }

  /**
   * Drafts tokens for the running requests where speculation is on, the batch is small enough, and
   * the free slots hold the drafts without evicting anything: a draft never costs a cached prefix
   * or a retraction.
   */
  private void draft() {
    for (Req r : running) {
      r.drafted = 0;
    }
    if (speculative == null || running.size() > speculative.disableByBatchSize()) {
      return;
    }
    int extra = 0;
    for (Req r : running) {
      if (r.verification == null) {
        r.verification = new DraftVerification(speculative.numDraftTokens());
      }
      // Drafts stop one short of the limit: the step's last row gives one token more.
      int max =
          r.verification.allowance(
              Math.min(speculative.numDraftTokens(), r.effectiveMaxNewTokens - r.outputLen() - 1));
      if (max <= 0) {
        continue;
      }
      r.drafted =
          NgramDrafter.draft(
              r.grow(max),
              r.len,
              r.namespace(),
              finishedOutputs,
              speculative.minMatchWindow(),
              speculative.maxMatchWindow(),
              max);
      extra +=
          allocator.slotsNeededForExtend(r.computedLen, r.computedLen + 1 + r.drafted)
              - allocator.slotsNeededForExtend(r.computedLen, r.computedLen + 1);
    }
    if (allocator.availableSize() < decodeSlotsNeeded() + extra) {
      for (Req r : running) {
        r.drafted = 0;
      }
    }
  }

  /**
   * Adds every running request's next token to the prefill batch, when the pool has room for them
   * without retracting anyone (the prefill adder reserved it); otherwise they wait for the next
   * decode step.
   */
  private void mixRunning() {
    if (running.isEmpty()) {
      return;
    }
    if (!makeRoom(decodeSlotsNeeded())) {
      return;
    }
    newTokenRatio.decay();
    batch = new ArrayList<>(batch);
    for (Req r : running) {
      r.drafted = 0;
    }
    appendDecodes(decodeLastLocs());
  }

  /** KV slots the running requests need to grow by one token each. */
  private int decodeSlotsNeeded() {
    int need = 0;
    for (Req r : running) {
      need += allocator.slotsNeededForExtend(r.computedLen, r.computedLen + 1);
    }
    return need;
  }

  /**
   * Evicts unlocked cache until {@code need} slots are free, and no more than is missing: where
   * tokens go is the allocator's choice, how much is evicted is not. Whether the slots are free.
   */
  private boolean makeRoom(int need) {
    int shortfall = need - allocator.availableSize();
    if (shortfall > 0 && cache.evictableSize() > 0) {
      int before = allocator.availableSize();
      cache.evict(shortfall);
      int freed = allocator.availableSize() - before;
      stepEvicted += freed;
      stepShortfall += shortfall;
      // Whole leaves go: only the last may reach past what was missing.
      stepExcess = Math.max(stepExcess, freed - shortfall - cache.lastEvictedLength() + 1);
      evictedTokens += freed;
    }
    return allocator.availableSize() >= need;
  }

  /** The slot of each running request's last token. */
  private int[] decodeLastLocs() {
    int[] lastLocs = new int[running.size()];
    for (int i = 0; i < lastLocs.length; i++) {
      Req r = running.get(i);
      lastLocs[i] = reqToToken.get(r.cache.reqPoolIdx(), r.computedLen - 1);
    }
    return lastLocs;
  }

  /**
   * Appends each running request's next token, and its draft if it has one, to the forward batch,
   * slots allocated; {@code lastLocs} holds the slot of each one's last token.
   */
  private void appendDecodes(int[] lastLocs) {
    int n = running.size();
    int[] seqLens = new int[n];
    int[] prefixLens = null;
    for (int i = 0; i < n; i++) {
      Req r = running.get(i);
      seqLens[i] = r.computedLen + 1 + r.drafted;
      if (r.drafted > 0 && prefixLens == null) {
        prefixLens = new int[n];
      }
    }
    if (prefixLens != null) {
      for (int i = 0; i < n; i++) {
        prefixLens[i] = running.get(i).computedLen;
      }
    }
    int[] locs =
        prefixLens == null
            ? allocator.allocDecode(seqLens, lastLocs)
            : allocator.allocExtend(prefixLens, seqLens, lastLocs);
    if (locs == null) {
      throw new IllegalStateException("the allocator refused " + n + " decode slots after room");
    }
    int off = 0;
    for (int i = 0; i < n; i++) {
      Req r = running.get(i);
      int slot = r.cache.reqPoolIdx();
      int count = 1 + r.drafted;
      reqToToken.write(slot, r.computedLen, locs, off, count);
      fb.add(slot, r.computedLen, r.tokens, r.computedLen, count, locs, off);
      if (r.drafted > 0) {
        // The draft positions' rows go to the sink, which verifies them (scorePosition).
        fb.scorePositions(0);
        r.verification.start(r.drafted);
        draftTokens += r.drafted;
      }
      Sampler.prepare(fb, r.params(), r.outputLen() + r.drafted);
      off += count;
    }
    decodeTokens += off;
    batch.addAll(running);
  }

  /**
   * Sends the running request with the least progress (fewest outputs, then longest prompt) back to
   * the waiting queue, freeing its K/V; it is prefilled again, prompt and outputs, when readmitted.
   */
  private void retractOne() {
    Req victim = running.get(0);
    for (Req r : running) {
      if (r.outputLen() < victim.outputLen()
          || (r.outputLen() == victim.outputLen() && r.promptLen() > victim.promptLen())) {
        victim = r;
      }
    }
    running.remove(victim);
    retract(victim);
  }

  /**
   * Hands a request's K/V to the prefix cache, unlocked, frees its row, and queues it first to be
   * admitted again. Its K/V is then evictable cache like any other: eviction makes the room the
   * retraction was for, and under tiers moves it to the host, so readmission matches its own tokens
   * (prompt and outputs so far) and loads them back instead of prefilling them again.
   */
  private void retract(Req victim) {
    cache.cacheFinishedReq(victim.cache, victim.tokens, victim.computedLen);
    victim.computedLen = 0;
    victim.prefixLen = 0;
    victim.chunking = false;
    victim.retractions++;
    retractions++;
    waiting.add(0, victim);
  }

  // ---- results ----

  /** The batch's first {@code extendCount} requests extended; the rest decoded. */
  private void processResults(int extendCount, List<TokenEvent> events) {
    long now = System.nanoTime();
    List<Req> finished = new ArrayList<>();
    for (int b = 0; b < batch.size(); b++) {
      Req r = batch.get(b);
      boolean prefill = b < extendCount;
      if (prefill) {
        r.computedLen += r.extendInputLen;
        if (r.chunking) {
          if (r.scores != null) {
            // The chunk's last position: its row is the step's, not a scored one.
            scorePosition(b, r.extendInputLen - 1, logits.rows(), b * vocab);
          }
          // A finished chunk becomes the prefix of the next one.
          cache.cacheUnfinishedReq(r.cache, r.tokens, r.computedLen);
          continue;
        }
      } else {
        int end = r.computedLen + 1 + r.drafted;
        r.computedLen++;
        if (r.drafted > 0) {
          FinishReason finish = emitVerified(r, b, end, now, events);
          if (finish != null) {
            end(r, finish, finished);
          }
          continue;
        }
      }
      FinishReason finish = sampleNext(r, b, now, events);
      if (finish != null) {
        end(r, finish, finished);
      } else if (prefill) {
        // Make the prompt shareable now, and start decoding.
        cache.cacheUnfinishedReq(r.cache, r.tokens, r.computedLen);
        running.add(r);
      }
    }
    if (!finished.isEmpty()) {
      Set<Req> done = Collections.newSetFromMap(new IdentityHashMap<>());
      done.addAll(finished);
      running.removeIf(done::contains);
    }
  }

  /**
   * Samples a request's next token from row {@code b} of the step's logits and emits it, or, where
   * no token continues its response format (only where the vocabulary lacks a character JSON needs
   * next), ends it with that error. Returns how the request ends, or null.
   */
  private FinishReason sampleNext(Req r, int b, long now, List<TokenEvent> events) {
    int index = r.outputLen();
    long[] allowed =
        masks.allowed(
            r.params(),
            r.constraint,
            r.budget,
            index,
            r.ignoreEos() ? NO_TOKENS : endTokens,
            r.stopTokenIds());
    if (allowed != null && TokenMasks.isEmpty(allowed)) {
      return formatDeadEnd(r, events);
    }
    int token =
        sampler.sample(logits, b, r.params(), r.tokens, r.promptLen(), r.len, index, allowed);
    return emit(r, token, sampler.lastLogprob(), lastTopIds(), lastTopLogprobs(), now, events);
  }

  /** The end of a request that no token can continue in its format. */
  private FinishReason formatDeadEnd(Req r, List<TokenEvent> events) {
    FinishReason error = FinishReason.error("no token continues its response format");
    events.add(TokenEvent.end(r.id(), error, Math.max(0, r.cachedTokens)));
    return error;
  }

  /** A request's end: its K/V to the cache, and out of the engine. */
  private void end(Req r, FinishReason finish, List<Req> finished) {
    r.finish = finish;
    if (finishedOutputs != null) {
      finishedOutputs.add(r.namespace(), r.tokens, r.promptLen(), r.len);
    }
    cache.cacheFinishedReq(r.cache, r.tokens, r.computedLen);
    live.remove(r.id());
    finished.add(r);
  }

  /** The alternatives the sampler reported for its last token; most requests ask for none. */
  private int[] lastTopIds() {
    int k = sampler.lastTopCount();
    if (k == 0) {
      return TokenEvent.NO_IDS;
    }
    int[] ids = new int[k];
    for (int i = 0; i < k; i++) {
      ids[i] = sampler.lastTopId(i);
    }
    return ids;
  }

  private float[] lastTopLogprobs() {
    int k = sampler.lastTopCount();
    if (k == 0) {
      return TokenEvent.NO_LOGPROBS;
    }
    float[] lp = new float[k];
    for (int i = 0; i < k; i++) {
      lp[i] = sampler.lastTopLogprob(i);
    }
    return lp;
  }

  /**
   * The tokens a verified draft gives: each accepted draft token, then the token sampled where the
   * draft was refused, or, when all were accepted, the token of the step's last row; up to the
   * first that ends the request. The K/V of the positions after them goes back to the pool. Returns
   * how the request ends, or null.
   *
   * @param end the position after the step's last (the last draft token's plus one)
   */
  private FinishReason emitVerified(Req r, int b, int end, long now, List<TokenEvent> events) {
    DraftVerification v = r.verification;
    r.drafted = 0;
    FinishReason finish = null;
    int emitted = 0;
    for (int j = 0; j < v.sampled() && finish == null; j++) {
      if (j > 0) {
        r.computedLen++; // draft token j - 1, accepted: its K/V holds
      }
      finish = emit(r, v.token(j), v.logprob(j), v.topIds(j), v.topLogprobs(j), now, events);
      emitted++;
    }
    if (finish == null && v.allAccepted()) {
      r.computedLen++;
      finish = sampleNext(r, b, now, events);
      emitted++;
    } else if (finish == null && v.stopped()) {
      // No token continues the format at the next position: the request ends there, as it would in
      // a step without drafts.
      finish = formatDeadEnd(r, events);
    }
    acceptedDraftTokens += Math.max(0, emitted - 1);
    v.adapt();
    freeRefused(r, end);
    return finish;
  }

  /**
   * Frees the slots of a request's positions from its computed length (rounded up to a page: the
   * page it ends in stays its own) to {@code end}: the refused draft tokens'.
   */
  private void freeRefused(Req r, int end) {
    int page = allocator.pageSize();
    int from = (r.computedLen + page - 1) / page * page;
    int n = 0;
    for (int p = from; p < end; p++) {
      refusedSlots[n++] = reqToToken.get(r.cache.reqPoolIdx(), p);
    }
    if (n > 0) {
      allocator.free(refusedSlots, 0, n);
    }
  }

  /**
   * Appends token number {@code r.outputLen()} to a request and reports it: advances its format and
   * budget, and checks whether it ends the request (returned; null: it goes on).
   */
  private FinishReason emit(
      Req r,
      int token,
      float logprob,
      int[] topIds,
      float[] topLogprobs,
      long now,
      List<TokenEvent> events) {
    int index = r.outputLen();
    r.append(token);
    if (r.constraint != null) {
      r.constraint.advance(token);
    }
    if (r.budget != null) {
      r.budget.advance(token);
    }
    if (r.firstTokenNanos == 0) {
      r.firstTokenNanos = now;
    }
    r.lastTokenNanos = now;
    FinishReason finish = FinishCheck.after(r, token, endTokens);
    PromptLogprobs prompt = r.scores == null ? null : r.scores.result();
    r.scores = null;
    events.add(
        new TokenEvent(
            r.id(),
            index,
            token,
            logprob,
            finish,
            finish == null ? 0 : Math.max(0, r.cachedTokens),
            index == 0 ? queuedMillis(r) : 0,
            topIds,
            topLogprobs,
            prompt));
    return finish;
  }

  /**
   * Reads a prompt log-probability from the logits at new token {@code i} of the step's request
   * {@code b}: the step hands over every scored position's row, and each chunk's last row.
   */
  private void scorePosition(int b, int i, float[] row, int off) {
    Req r = batch.get(b);
    if (r.drafted > 0) {
      verifyDraft(r, i, row, off);
      return;
    }
    int position = fb.prefixLen(b) + i;
    if (r.scores != null && position + 1 < r.promptLen()) {
      r.scores.score(sampler, position, r.tokens[position + 1], row, off);
    }
  }

  /**
   * Samples draft position {@code i} of a request as a plain decode step would sample its token
   * there: the same row bits, index, history (the draft tokens before it, accepted) and mask. Rows
   * after the first refused draft token are not read.
   */
  private void verifyDraft(Req r, int i, float[] row, int off) {
    DraftVerification v = r.verification;
    if (!v.wants(i)) {
      return;
    }
    if (i == 0) {
      // The format and thought budget as they stand, to advance over the accepted draft tokens.
      if (r.constraint != null) {
        if (v.constraint == null) {
          v.constraint = r.constraint.fork();
        }
        v.constraint.copyFrom(r.constraint);
      }
      if (r.budget != null) {
        if (v.budget == null) {
          v.budget = r.budget.fork();
        }
        v.budget.copyFrom(r.budget);
      }
    }
    OutputConstraint constraint = r.constraint == null ? null : v.constraint;
    ThoughtBudget budget = r.budget == null ? null : v.budget;
    int index = r.outputLen() + i;
    long[] allowed =
        masks.allowed(
            r.params(),
            constraint,
            budget,
            index,
            r.ignoreEos() ? NO_TOKENS : endTokens,
            r.stopTokenIds());
    if (allowed != null && TokenMasks.isEmpty(allowed)) {
      v.stop();
      return;
    }
    int token =
        sampler.sample(row, off, r.params(), r.tokens, r.promptLen(), r.len + i, index, allowed);
    int drafted = r.tokens[r.len + i];
    v.record(token, drafted, sampler.lastLogprob(), lastTopIds(), lastTopLogprobs());
    if (token == drafted) {
      if (constraint != null) {
        constraint.advance(token);
      }
      if (budget != null) {
        budget.advance(token);
      }
    }
  }

  /** Milliseconds between a request's submission and its first admission to a batch. */
  private static long queuedMillis(Req r) {
    return r.admittedNanos == 0 ? 0 : Math.max(0, (r.admittedNanos - r.queuedNanos) / 1_000_000);
  }

  /** Ends a running request outside a forward step. */
  private void finish(Req r, FinishReason reason, List<TokenEvent> events) {
    r.finish = reason;
    cache.cacheFinishedReq(r.cache, r.tokens, r.computedLen);
    live.remove(r.id());
    events.add(TokenEvent.end(r.id(), reason, Math.max(0, r.cachedTokens)));
  }

  /**
   * Waits until every page queued for the storage tier so far is on disk. Writes are otherwise in
   * the background, so what a later match finds there depends on timing; tests that count what was
   * computed call this after each step.
   */
  public void flushStorage() {
    if (tiered != null && tiered.storage() != null) {
      tiered.storage().flush();
    }
  }

  /**
   * Checks the pools' accounting: every usable slot is free, cached (evictable or protected) or
   * held by a request in the engine as its own; every running request holds a row. Throws {@link
   * IllegalStateException} on the first violation. For tests.
   */
  public void verifyInvariants() {
    long own = 0;
    List<Req> holders = new ArrayList<>(running);
    if (chunked != null) {
      holders.add(chunked);
    }
    int pageSize = allocator.pageSize();
    for (Req r : holders) {
      if (r.cache.reqPoolIdx() < 0) {
        throw new IllegalStateException(r + " runs without a request row");
      }
      int heldTokens = (r.computedLen + pageSize - 1) / pageSize * pageSize;
      own += heldTokens - r.cache.cacheProtectedLen();
    }
    long sum =
        (long) allocator.availableSize() + cache.evictableSize() + cache.protectedSize() + own;
    if (sum != allocator.size()) {
      throw new IllegalStateException(
          "slots do not add up: free "
              + allocator.availableSize()
              + " + evictable "
              + cache.evictableSize()
              + " + protected "
              + cache.protectedSize()
              + " + requests' own "
              + own
              + " != pool "
              + allocator.size());
    }
    if (reqToToken.availableSize() != reqToToken.size() - holders.size()) {
      throw new IllegalStateException(
          "request rows: "
              + (reqToToken.size() - reqToToken.availableSize())
              + " taken, "
              + holders.size()
              + " requests hold one");
    }
  }

  /**
   * KV tokens the last step evicted; the shortfall it evicted for; and by how much the worst
   * eviction of the step went past its shortfall beyond the last leaf it had to take (eviction
   * frees whole leaves, so only the last one may reach past what was missing: this is never
   * positive). For tests.
   */
  public int[] lastStepEviction() {
    return new int[] {stepEvicted, stepShortfall, stepExcess};
  }

  public EngineStats stats() {
    int free = allocator.availableSize();
    int evictable = cache.evictableSize();
    int prot = cache.protectedSize();
    return new EngineStats(
        running.size() + (chunked != null ? 1 : 0),
        waiting.size(),
        allocator.size(),
        allocator.size() - free,
        evictable,
        prot,
        free,
        cacheHitTokens,
        retractions,
        prefillTokens,
        decodeTokens,
        steps,
        forwardNanos,
        schedulerNanos,
        newTokenRatio.value(),
        batch.size(),
        evictedTokens,
        MemoryPressure.of(allocator.size(), allocator.size() - free, evictable),
        cache.tierStats(),
        draftTokens,
        acceptedDraftTokens);
  }

  /** The prefix cache, for inspection. */
  public PrefixCache prefixCache() {
    return cache;
  }

  @Override
  public void close() {
    try {
      if (tiered != null) {
        tiered.close(); // finishes the storage tier's queued writes
      }
    } finally {
      runner.close();
    }
  }
}
