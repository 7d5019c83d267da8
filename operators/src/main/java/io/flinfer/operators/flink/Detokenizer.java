package io.flinfer.operators.flink;

import io.flinfer.avro.Completion;
import io.flinfer.avro.CompletionChunk;
import io.flinfer.avro.PromptRequest;
import io.flinfer.avro.Provenance;
import io.flinfer.avro.Timings;
import io.flinfer.avro.TopLogprobs;
import io.flinfer.avro.Usage;
import io.flinfer.operators.detokenize.IncrementalDetokenizer;
import io.flinfer.operators.flink.state.ProgressSerializer;
import io.flinfer.operators.request.RequestLimits;
import io.flinfer.runtime.chat.ReasoningParser;
import io.flinfer.runtime.chat.ReasoningParsers;
import io.flinfer.runtime.chat.ReasoningStream;
import io.flinfer.runtime.chat.ToolCall;
import io.flinfer.runtime.chat.ToolCallFormat;
import io.flinfer.runtime.grammar.ResponseFormat;
import io.flinfer.runtime.model.LlamaModel;
import io.flinfer.runtime.tokenizer.Tokenizer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;

/**
 * Keyed by request id: turns token outputs into text deltas (the chunks output, for streaming
 * requests) and, at a request's end, its {@link Completion}. The state is the request and its
 * tokens so far; the decoder itself is rebuilt from them after a restore.
 */
public class Detokenizer extends KeyedProcessFunction<String, TokenOutput, Completion> {
  public static final OutputTag<CompletionChunk> CHUNKS = new OutputTag<>("chunks") {};

  /** Per request: its settings and tokens so far. */
  public static class Progress {
    public TokenizedPrompt prompt;
    public int[] tokens = new int[0];
    public long firstTokenMillis;
    public int cachedTokens;

    /**
     * Log-probabilities of the last tokens, not yet in a chunk because their text is held (part of
     * a UTF-8 character, or a possible start of a stop string): they go with the next chunk.
     */
    public float[] unsentLogprobs = new float[0];

    /**
     * The most likely tokens at those tokens' positions, the same number for each (the request's
     * top_logprobs), token after token; empty when the request asked for none.
     */
    public int[] unsentTopIds = new int[0];

    public float[] unsentTopLogprobs = new float[0];

    /** The first token's times from the inference operator ({@link TokenOutput}); -1: unknown. */
    public long queuedMillis = -1;

    public long engineFirstTokenMillis = -1;

    public Progress() {}
  }

  private final ModelSource modelSource;
  private final String modelId;
  private transient Tokenizer tokenizer;
  private transient ToolCallFormat toolCalls;
  private transient ReasoningParsers reasoningParsers;
  private transient ValueState<Progress> progress;
  private transient Map<String, IncrementalDetokenizer> decoders;
  private transient Map<String, ReasoningStream> thoughts;

  /** Prompt tokens per chunk of prompt log-probabilities. */
  private final int promptTokensPerChunk;

  private final CarriedHeaders carried;

  public Detokenizer(ModelSource modelSource, String modelId) {
    this(modelSource, modelId, RequestLimits.defaults(), CarriedHeaders.none());
  }

  /**
   * Its chunks of prompt log-probabilities sized to fit the largest record {@code limits} allow;
   * every chunk holds the request's {@code carried} headers.
   */
  public Detokenizer(
      ModelSource modelSource, String modelId, RequestLimits limits, CarriedHeaders carried) {
    this.modelSource = modelSource;
    this.modelId = modelId;
    this.promptTokensPerChunk = PromptLogprobChunks.tokensPerChunk(limits);
    this.carried = carried;
  }

  @Override
  public void open(OpenContext context) {
    LlamaModel model = modelSource.load();
    tokenizer = model.tokenizer();
    toolCalls = model.chatTemplate().map(ToolCallFormat::of).orElse(ToolCallFormat.UNKNOWN);
    reasoningParsers = new ReasoningParsers(model.chatTemplate().orElse(null));
    progress =
        getRuntimeContext()
            .getState(new ValueStateDescriptor<>("progress", new ProgressSerializer()));
    decoders = new HashMap<>();
    thoughts = new HashMap<>();
  }

  @Override
  public void processElement(TokenOutput t, Context ctx, Collector<Completion> out)
      throws Exception {
    Progress p = progress.value();
    if (p == null) {
      p = new Progress();
    }
    if (t.prompt != null) {
      p.prompt = t.prompt;
    }
    if (p.prompt == null) {
      return; // nothing known of this request (cannot happen with keyed, ordered outputs)
    }
    String id = t.requestId;
    IncrementalDetokenizer d = decoders.get(id);
    if (d == null) {
      d = newDecoder(p);
      for (int token : p.tokens) {
        d.next(token);
      }
      decoders.put(id, d);
    }
    ReasoningStream thought = thought(id, p, d);
    // Tokens already taken (a repeat after a restore) are skipped; the rest are consecutive.
    int skip = Math.max(0, p.tokens.length - t.index);
    int fresh = t.tokenIds.length - Math.min(skip, t.tokenIds.length);
    if (t.index >= 0 && fresh > 0) {
      if (p.tokens.length == 0) {
        if (p.prompt.request.getStream() && t.promptLogprobs.length > 0) {
          // They come before the first token's chunk, which may be held.
          for (CompletionChunk c :
              PromptLogprobChunks.of(
                  id,
                  p.prompt.promptIds,
                  t.promptLogprobs,
                  t.promptRanks,
                  t.promptTopIds,
                  t.promptTopLogprobs,
                  promptTokensPerChunk)) {
            ctx.output(CHUNKS, headed(c, p));
          }
        }
        p.firstTokenMillis = System.currentTimeMillis();
        p.queuedMillis = t.queuedMillis;
        p.engineFirstTokenMillis = t.engineFirstTokenMillis;
      }
      int before = p.tokens.length;
      p.tokens = Arrays.copyOf(p.tokens, before + fresh);
      int held = p.unsentLogprobs.length;
      // Tokens up to the last one that completed text go out; any after it stay held.
      int complete = 0;
      StringBuilder delta = new StringBuilder();
      for (int i = 0; i < fresh; i++) {
        p.tokens[before + i] = t.tokenIds[skip + i];
        String text = d.next(t.tokenIds[skip + i]);
        if (!text.isEmpty()) {
          delta.append(text);
          complete = held + i + 1;
        }
      }
      if (p.prompt.request.getStream()) {
        p.unsentLogprobs = Arrays.copyOf(p.unsentLogprobs, held + fresh);
        System.arraycopy(t.logprobs, skip, p.unsentLogprobs, held, fresh);
        int k = t.topIds.length / t.tokenIds.length;
        if (k > 0) {
          p.unsentTopIds = Arrays.copyOf(p.unsentTopIds, (held + fresh) * k);
          System.arraycopy(t.topIds, skip * k, p.unsentTopIds, held * k, fresh * k);
          p.unsentTopLogprobs = Arrays.copyOf(p.unsentTopLogprobs, (held + fresh) * k);
          System.arraycopy(t.topLogprobs, skip * k, p.unsentTopLogprobs, held * k, fresh * k);
        }
        if (complete > 0) {
          String text = delta.toString();
          ctx.output(
              CHUNKS,
              headed(chunk(id, p, text, complete, thought == null ? null : thought.next(text)), p));
        }
      }
    } else if (t.index >= 0 && t.finishType == null) {
      return; // a repeat after a restore
    }
    if (t.finishType == null) {
      progress.update(p);
      return;
    }
    String tail = d.finish();
    // The thinking's last piece may have been held (a possible tag) with no text after it.
    ReasoningParser.Split last = thought == null ? null : thought.next(tail).then(thought.finish());
    boolean lastSplit =
        last != null && !(last.content().isEmpty() && isNullOrEmpty(last.reasoning()));
    if (p.prompt.request.getStream()
        && (!tail.isEmpty() || p.unsentLogprobs.length > 0 || lastSplit)) {
      ctx.output(CHUNKS, headed(chunk(id, p, tail, p.unsentLogprobs.length, last), p));
    }
    long now = System.currentTimeMillis();
    TokenizedPrompt q = p.prompt;
    ReasoningParser parser = reasoningParser(q.request);
    ReasoningParser.Split answer =
        parser == null ? new ReasoningParser.Split(null, d.text()) : parser.split(d.text());
    String finish = d.stopped() ? "stop" : t.finishType;
    out.collect(
        Completion.newBuilder()
            .setRequestId(id)
            .setText(d.text())
            .setFinishReason(finish)
            .setFinishDetail(t.finishDetail)
            .setUsage(
                new Usage(
                    q.promptIds.length,
                    t.cachedTokens,
                    p.tokens.length,
                    parser == null ? 0 : reasoningTokens(p, parser.thoughtLength(d.text()))))
            .setTimings(
                new Timings(
                    Math.max(0, p.queuedMillis),
                    p.firstTokenMillis == 0 ? 0 : p.firstTokenMillis - q.recordTimestampMillis,
                    now - q.recordTimestampMillis,
                    Math.max(0, p.engineFirstTokenMillis)))
            .setMetadata(q.request.getMetadata())
            .setReasoningContent(answer.reasoning())
            .setToolCalls(toolCalls(id, q.request, answer.content(), finish.equals("length")))
            .setProvenance(
                Provenance.newBuilder()
                    .setModelId(modelId)
                    .setSeed(q.seed)
                    .setSourceTopic(q.topic == null ? "" : q.topic)
                    .setSourcePartition(q.partition)
                    .setSourceOffset(q.offset)
                    .build())
            .build());
    decoders.remove(id);
    thoughts.remove(id);
    progress.clear();
  }

  /** {@code c} with its request's carried headers. */
  private CompletionChunk headed(CompletionChunk c, Progress p) {
    c.setHeaders(carried.of(p.prompt.request.getMetadata()));
    return c;
  }

  /** The parser of a conversation's thinking, where the model's template writes it; else null. */
  private ReasoningParser reasoningParser(PromptRequest r) {
    return r.getMessages() == null
        ? null
        : reasoningParsers.forKwargs(r.getChatTemplateKwargs()).orElse(null);
  }

  /**
   * How many of the request's tokens wrote the first {@code thoughtChars} characters of its text:
   * up to the one that brought the last of them.
   */
  private int reasoningTokens(Progress p, int thoughtChars) {
    if (thoughtChars == 0) {
      return 0;
    }
    IncrementalDetokenizer d = newDecoder(p);
    int chars = 0;
    for (int i = 0; i < p.tokens.length; i++) {
      chars += d.next(p.tokens[i]).length();
      if (chars >= thoughtChars) {
        return i + 1;
      }
    }
    return p.tokens.length;
  }

  /**
   * The calls in the answer of a request with tools and a text response, read in the model family's
   * own form, each id derived from the request id (an answer {@code cutShort} by the token limit:
   * the calls it began, as far as they got); none otherwise.
   */
  private List<io.flinfer.avro.ToolCall> toolCalls(
      String id, PromptRequest r, String text, boolean cutShort) {
    if (r.getTools() == null || !ResponseFormat.TEXT.wireName().equals(r.getResponseFormat())) {
      return List.of();
    }
    List<io.flinfer.avro.ToolCall> out = new ArrayList<>();
    for (ToolCall c : toolCalls.parse(text, cutShort).calls()) {
      out.add(
          new io.flinfer.avro.ToolCall(ToolCall.idFor(id, out.size()), c.name(), c.arguments()));
    }
    return out;
  }

  /**
   * The thinking stream of a streamed conversation with a reasoning model, or null. One rebuilt
   * after a restore is fed the text so far at once: what a stream lets out depends on the text
   * alone, not on its pieces, so the chunks after it split as they would have.
   */
  private ReasoningStream thought(String id, Progress p, IncrementalDetokenizer d) {
    ReasoningStream s = thoughts.get(id);
    if (s == null && p.prompt.request.getStream()) {
      ReasoningParser parser = reasoningParser(p.prompt.request);
      if (parser != null) {
        s = parser.stream();
        s.next(d.text());
        thoughts.put(id, s);
      }
    }
    return s;
  }

  private static boolean isNullOrEmpty(String s) {
    return s == null || s.isEmpty();
  }

  /**
   * A chunk of {@code text} with the first {@code n} tokens not yet sent; its index is its first
   * token's (or, with none, one past the last), so a consumer drops repeats by (request id, index).
   * {@code split} is what the text adds to the thinking and to the answer, or null where the output
   * is not split.
   */
  private static CompletionChunk chunk(
      String id, Progress p, String text, int n, ReasoningParser.Split split) {
    int first = p.tokens.length - p.unsentLogprobs.length;
    int k = p.unsentLogprobs.length == 0 ? 0 : p.unsentTopIds.length / p.unsentLogprobs.length;
    List<Integer> ids = new ArrayList<>(n);
    List<Float> logprobs = new ArrayList<>(n);
    List<TopLogprobs> tops = new ArrayList<>(k > 0 ? n : 0);
    for (int i = 0; i < n; i++) {
      ids.add(p.tokens[first + i]);
      logprobs.add(p.unsentLogprobs[i]);
      if (k > 0) {
        tops.add(PromptLogprobChunks.alternatives(p.unsentTopIds, p.unsentTopLogprobs, k, i));
      }
    }
    p.unsentLogprobs = Arrays.copyOfRange(p.unsentLogprobs, n, p.unsentLogprobs.length);
    p.unsentTopIds = Arrays.copyOfRange(p.unsentTopIds, n * k, p.unsentTopIds.length);
    p.unsentTopLogprobs =
        Arrays.copyOfRange(p.unsentTopLogprobs, n * k, p.unsentTopLogprobs.length);
    return CompletionChunk.newBuilder()
        .setRequestId(id)
        .setIndex(n > 0 ? first : p.tokens.length)
        .setTextDelta(text)
        .setTokenIds(ids)
        .setLogprobs(logprobs)
        .setTopLogprobs(tops)
        .setReasoningDelta(
            split == null ? null : split.reasoning() == null ? "" : split.reasoning())
        .setContentDelta(split == null ? null : split.content())
        .build();
  }

  private IncrementalDetokenizer newDecoder(Progress p) {
    int[] ids = p.prompt.promptIds;
    List<String> stops = new ArrayList<>(p.prompt.request.getStop());
    return new IncrementalDetokenizer(tokenizer, ids[ids.length - 1], stops);
  }
}
