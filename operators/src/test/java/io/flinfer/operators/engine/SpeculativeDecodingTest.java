package io.flinfer.operators.engine;

import static io.flinfer.operators.engine.EngineTest.assertNoLeak;
import static org.assertj.core.api.Assertions.assertThat;

import io.flinfer.runtime.forward.CpuModelRunner;
import io.flinfer.runtime.gguf.GgufModelLoader;
import io.flinfer.runtime.grammar.ResponseFormat;
import io.flinfer.runtime.grammar.Thinking;
import io.flinfer.runtime.model.LlamaModel;
import io.flinfer.runtime.sampling.SamplingParams;
import io.flinfer.runtime.testing.SharedFiles;
import io.flinfer.runtime.testing.TinyRandomModel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Speculative decoding changes how many steps an output takes, never the output: every request
 * gets, bit for bit, the tokens, log-probabilities, alternatives and end it gets without drafts,
 * whatever it samples with, how it stops, the page size, or the pool's pressure; and refused drafts
 * leave no slot behind.
 */
class SpeculativeDecodingTest {
  private static LlamaModel model;

  @BeforeAll
  static void load() {
    model = SharedFiles.stories260k();
  }

  private static int[] encode(String text) {
    return model.tokenizer().encode(text, true);
  }

  /** The engine test's workload and requests with every way of sampling and stopping. */
  private static List<Req> requests() {
    List<Req> reqs = new ArrayList<>(EngineTest.workload());
    String tom = "Tom has a red ball. Tom likes the red ball. ";
    reqs.add(
        Req.builder("repeat", encode(tom + tom + tom + "Tom has"))
            .maxNewTokens(48)
            .ignoreEos(true)
            .build());
    reqs.add(
        Req.builder("penalties", encode(tom + tom + "Tom"))
            .params(
                SamplingParams.builder()
                    .temperature(0.7f)
                    .repetitionPenalty(1.2f)
                    .frequencyPenalty(0.3f)
                    .presencePenalty(0.2f)
                    .topLogprobs(3)
                    .seed(7)
                    .build())
            .maxNewTokens(40)
            .ignoreEos(true)
            .build());
    reqs.add(
        Req.builder("alternatives", encode(tom + tom))
            .params(SamplingParams.builder().topLogprobs(5).minTokens(6).build())
            .maxNewTokens(80)
            .build());
    reqs.add(
        Req.builder("stop string", encode(tom + tom + "Tom"))
            .stopStrings(List.of("a big"))
            .maxNewTokens(60)
            .build());
    reqs.add(
        Req.builder("stop token", encode(tom + "Tom has a"))
            .stopTokenIds(encode("ball")[1])
            .maxNewTokens(60)
            .ignoreEos(true)
            .build());
    reqs.add(Req.builder("eos", encode("Once upon a time")).maxNewTokens(300).build());
    return reqs;
  }

  /** Serves requests to the end, the pools' accounting checked after every step. */
  private static Map<String, List<TokenEvent>> serve(Engine e, List<Req> reqs) {
    return EngineTest.runAll(e, reqs, Engine::verifyInvariants);
  }

  private static EngineConfig.Builder config(int pageSize, int poolTokens, int running) {
    return EngineConfig.builder()
        .maxRunningRequests(running)
        .maxTotalTokens(poolTokens)
        .pageSize(pageSize)
        .chunkedPrefillSize(32)
        .maxPrefillTokens(128)
        .threads(2);
  }

  private static void assertSameEvents(
      Map<String, List<TokenEvent>> expected, Map<String, List<TokenEvent>> actual) {
    assertThat(actual.keySet()).isEqualTo(expected.keySet());
    for (String id : expected.keySet()) {
      List<TokenEvent> a = expected.get(id);
      List<TokenEvent> s = actual.get(id);
      assertThat(s).as(id).hasSameSizeAs(a);
      for (int i = 0; i < a.size(); i++) {
        TokenEvent x = a.get(i);
        TokenEvent y = s.get(i);
        assertThat(y.index()).as("%s event %d", id, i).isEqualTo(x.index());
        assertThat(y.tokenId()).as("%s token %d", id, i).isEqualTo(x.tokenId());
        assertThat(Float.floatToRawIntBits(y.logprob()))
            .as("%s logprob %d", id, i)
            .isEqualTo(Float.floatToRawIntBits(x.logprob()));
        assertThat(y.topIds()).as("%s alternatives %d", id, i).isEqualTo(x.topIds());
        assertThat(y.topLogprobs()).as("%s alternatives %d", id, i).isEqualTo(x.topLogprobs());
        assertThat(y.finish()).as("%s end", id).isEqualTo(x.finish());
      }
    }
  }

  @ParameterizedTest(name = "page size {0}, pool {1}, {2} drafts, windows {3}-{4}, running {5}")
  @CsvSource({
    "1, 4096, 4, 1, 4, 4",
    "4, 4096, 8, 2, 3, 16",
    "16, 4096, 3, 1, 1, 1",
    "1, 200, 6, 1, 4, 8",
    "4, 256, 16, 1, 8, 16"
  })
  void theOutputIsBitForBitTheOneWithoutDrafts(
      int pageSize, int pool, int drafts, int minWindow, int maxWindow, int running) {
    List<Req> reqs = requests();
    Map<String, List<TokenEvent>> plain;
    long plainSteps;
    try (Engine e =
        new Engine(model, config(pageSize, pool, running).build(), CpuModelRunner::new)) {
      plain = serve(e, EngineTest.copies(reqs));
      plainSteps = e.stats().steps();
      assertThat(e.stats().draftTokens()).isZero();
    }
    EngineConfig spec =
        config(pageSize, pool, running)
            .speculative(new SpeculativeConfig(drafts, minWindow, maxWindow, 16))
            .build();
    try (Engine e = new Engine(model, spec, CpuModelRunner::new)) {
      Map<String, List<TokenEvent>> drafted = serve(e, EngineTest.copies(reqs));
      assertSameEvents(plain, drafted);
      EngineStats s = e.stats();
      assertThat(s.draftTokens()).as("drafts were verified").isPositive();
      assertThat(s.acceptedDraftTokens()).as("drafts were accepted").isPositive();
      assertThat(s.acceptedDraftTokens()).isLessThanOrEqualTo(s.draftTokens());
      assertThat(s.steps()).as("fewer steps for the same tokens").isLessThan(plainSteps);
      assertNoLeak(e);
    }
    assertThat(plain.get("stop string").get(plain.get("stop string").size() - 1).finish().type())
        .isEqualTo(FinishReason.Type.STOP);
  }

  @Test
  void eachStepGivesOneTokenPlusTheDraftTokensItAccepted() {
    Req story =
        Req.builder("story", encode("Once upon a time")).maxNewTokens(400).ignoreEos(true).build();
    EngineConfig spec =
        config(1, 4096, 1).chunkedPrefillSize(0).speculative(SpeculativeConfig.ngram(8)).build();
    try (Engine e = new Engine(model, spec, CpuModelRunner::new)) {
      List<TokenEvent> out = serve(e, List.of(story)).get("story");
      EngineStats s = e.stats();
      // One step prefills and gives the first token.
      assertThat(s.steps() - 1 + s.acceptedDraftTokens()).isEqualTo(out.size() - 1);
      assertThat(s.acceptedDraftTokens()).isPositive();
    }
  }

  @Test
  void aTextThatRepeatsItselfIsDraftedWhole() {
    // A bias that makes one token the only likely one: the text repeats it, and the drafts hold.
    int token = encode("ball")[1];
    Req loop =
        Req.builder("loop", encode("Tom has a red ball"))
            .params(
                SamplingParams.builder().logitBias(new int[] {token}, new float[] {100f}).build())
            .maxNewTokens(200)
            .ignoreEos(true)
            .build();
    EngineConfig spec =
        config(1, 4096, 1).chunkedPrefillSize(0).speculative(SpeculativeConfig.ngram(8)).build();
    try (Engine e = new Engine(model, spec, CpuModelRunner::new)) {
      List<TokenEvent> out = serve(e, List.of(loop)).get("loop");
      assertThat(out).hasSize(200).allSatisfy(t -> assertThat(t.tokenId()).isEqualTo(token));
      EngineStats s = e.stats();
      assertThat(s.draftAcceptanceRate()).isGreaterThan(0.95);
      // Up to 9 tokens a step (the last token's and 8 drafts'), once the run is as long as a
      // draft: the first drafts double in length.
      assertThat(s.steps()).isLessThanOrEqualTo(6 + 199 / 9);
    }
  }

  /**
   * A request drafts from the finished answers of its own namespace: the same prompt answered
   * before is drafted nearly whole, and one answered for another namespace does not help.
   */
  @Test
  void finishedAnswersDraftForTheirNamespaceOnly() {
    int[] prompt = encode("Once upon a time");
    EngineConfig spec = config(1, 4096, 1).speculative(SpeculativeConfig.ngram(8)).build();
    long[] accepted = new long[2];
    List<List<TokenEvent>> answers = new ArrayList<>();
    for (int k = 0; k < 2; k++) {
      try (Engine e = new Engine(model, spec, CpuModelRunner::new)) {
        Req first =
            Req.builder("first", prompt).namespace("t1").maxNewTokens(120).ignoreEos(true).build();
        serve(e, List.of(first));
        long before = e.stats().acceptedDraftTokens();
        Req again =
            Req.builder("again", prompt)
                .namespace(k == 0 ? "t1" : "t2")
                .maxNewTokens(120)
                .ignoreEos(true)
                .build();
        answers.add(serve(e, List.of(again)).get("again"));
        accepted[k] = e.stats().acceptedDraftTokens() - before;
      }
    }
    assertSameEvents(Map.of("again", answers.get(1)), Map.of("again", answers.get(0)));
    assertThat(accepted[0])
        .as("the same namespace's answer drafts the repeat")
        .isGreaterThan(100)
        .isGreaterThan(accepted[1] + 50);
  }

  @Test
  void largerBatchesThanTheLimitDoNotSpeculate() {
    List<Req> reqs = new ArrayList<>();
    String tom = "Tom has a red ball. Tom likes the red ball. ";
    for (int i = 0; i < 3; i++) {
      reqs.add(
          Req.builder("r" + i, encode(tom + tom + "Tom " + i))
              .maxNewTokens(20)
              .ignoreEos(true)
              .build());
    }
    EngineConfig spec = config(1, 4096, 3).speculative(new SpeculativeConfig(4, 1, 4, 2)).build();
    try (Engine e = new Engine(model, spec, CpuModelRunner::new)) {
      // All three are admitted in the first step and run together to the end.
      serve(e, reqs);
      assertThat(e.stats().draftTokens()).isZero();
    }
  }

  @Test
  void everyZooFamilyGetsTheSameTokensWithDrafts() {
    for (String name : List.of("llama3-tiny", "qwen3-tiny", "phi3-tiny")) {
      LlamaModel zoo =
          GgufModelLoader.load(SharedFiles.root().resolve("models/zoo/" + name + ".gguf"));
      int[] base = zoo.tokenizer().encode("the cat sat on the mat and the cat sat", true);
      List<Req> reqs = new ArrayList<>();
      for (int i = 0; i < 3; i++) {
        SamplingParams p =
            i == 0
                ? SamplingParams.GREEDY
                : SamplingParams.builder().temperature(0.9f).topLogprobs(2).seed(i).build();
        reqs.add(Req.builder(name + i, base).params(p).maxNewTokens(40).ignoreEos(true).build());
      }
      Map<String, List<TokenEvent>> plain;
      try (Engine e = new Engine(zoo, config(1, 2048, 4).build(), CpuModelRunner::new)) {
        plain = serve(e, EngineTest.copies(reqs));
      }
      EngineConfig spec = config(1, 2048, 4).speculative(SpeculativeConfig.ngram(5)).build();
      try (Engine e = new Engine(zoo, spec, CpuModelRunner::new)) {
        assertSameEvents(plain, serve(e, EngineTest.copies(reqs)));
        assertThat(e.stats().draftTokens()).as(name).isPositive();
      }
    }
  }

  /**
   * Requests held to a format or a thought budget verify drafts against the format's state after
   * the accepted draft tokens, and give the same events as without drafts: one JSON object on
   * stories260K, a schema on a random-weight model over bytes, and a capped thought on the zoo's
   * Qwen3.
   */
  @Test
  void formatsAndThoughtBudgetsGiveTheSameTokensWithDrafts(@TempDir Path dir) throws Exception {
    List<Req> json = new ArrayList<>();
    int[] story = encode("Once upon a time");
    for (int i = 0; i < 3; i++) {
      SamplingParams p =
          SamplingParams.builder()
              .temperature(i == 0 ? 0f : 1.2f)
              .seed(70 + i)
              .topLogprobs(i == 1 ? 3 : 0)
              .responseFormat(ResponseFormat.JSON_OBJECT)
              .build();
      json.add(Req.builder("json" + i, story).params(p).maxNewTokens(300).build());
    }
    assertSameWithDrafts(model, json, 1024);

    LlamaModel bytes = TinyRandomModel.write(dir, 11);
    String schema =
        "{\"type\": \"object\", \"properties\": {\"tags\": {\"type\": \"array\", \"items\":"
            + " {\"enum\": [\"alpha\", \"beta\"]}, \"maxItems\": 12}}}";
    List<Req> schemas = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      SamplingParams p =
          SamplingParams.builder()
              .temperature(i == 0 ? 0f : 1f)
              .seed(i)
              .responseFormat(ResponseFormat.JSON_SCHEMA)
              .jsonSchema(schema)
              .build();
      schemas.add(
          Req.builder("schema" + i, bytes.tokenizer().encode("JSON:", true))
              .params(p)
              .maxNewTokens(600)
              .build());
    }
    assertSameWithDrafts(bytes, schemas, 4096);

    LlamaModel qwen3 =
        GgufModelLoader.load(SharedFiles.root().resolve("models/zoo/qwen3-tiny.gguf"));
    int think = 151667;
    int[] prompt = qwen3.tokenizer().encode("<|im_start|>user\nHi<|im_end|>\n", false, true);
    List<Req> thoughts = new ArrayList<>();
    for (int budget : new int[] {3, 9}) {
      SamplingParams p =
          SamplingParams.builder()
              .logitBias(new int[] {think}, new float[] {100f})
              .thinking(Thinking.MAY_OPEN)
              .thinkingBudget(budget)
              .build();
      thoughts.add(Req.builder("thought" + budget, prompt).params(p).maxNewTokens(30).build());
    }
    assertSameWithDrafts(qwen3, thoughts, 1024);
  }

  /** Serves {@code reqs} without drafts and with them: the same events, and drafts verified. */
  private static void assertSameWithDrafts(LlamaModel m, List<Req> reqs, int pool) {
    Map<String, List<TokenEvent>> plain;
    try (Engine e = new Engine(m, config(1, pool, 4).build(), CpuModelRunner::new)) {
      plain = serve(e, EngineTest.copies(reqs));
    }
    EngineConfig spec = config(1, pool, 4).speculative(SpeculativeConfig.ngram(6)).build();
    try (Engine e = new Engine(m, spec, CpuModelRunner::new)) {
      assertSameEvents(plain, serve(e, EngineTest.copies(reqs)));
      assertThat(e.stats().acceptedDraftTokens()).as("drafts held").isPositive();
      assertNoLeak(e);
    }
  }
}
