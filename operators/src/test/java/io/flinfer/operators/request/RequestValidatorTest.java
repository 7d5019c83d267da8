package io.flinfer.operators.request;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flinfer.avro.ChatMessage;
import io.flinfer.avro.PromptRequest;
import io.flinfer.avro.SamplingOptions;
import io.flinfer.runtime.chat.ChatTemplate;
import io.flinfer.runtime.grammar.ResponseFormat;
import io.flinfer.runtime.grammar.Thinking;
import io.flinfer.runtime.model.LlamaModel;
import io.flinfer.runtime.sampling.SamplingParams;
import io.flinfer.runtime.testing.SharedFiles;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class RequestValidatorTest {
  private static LlamaModel model;
  private static RequestValidator validator;

  @BeforeAll
  static void load() {
    model = SharedFiles.stories260k();
    validator =
        new RequestValidator(
            model.tokenizer(), 512, RequestLimits.builder().maxNewTokens(256).build(), Set.of());
  }

  private static PromptRequest.Builder base() {
    return PromptRequest.newBuilder().setRequestId("r1").setPrompt("Once upon a time");
  }

  private static String error(PromptRequest r) {
    RequestValidator.Outcome o = validator.validate(r, 1000);
    assertThat(o.ok()).as("expected an error").isFalse();
    return o.error();
  }

  @Test
  void aValidRequestBecomesAnEngineRequestWithAStableSeed() {
    RequestValidator.Outcome o =
        validator.validate(
            base().setTenant("acme").setMaxNewTokens(20).setStop(List.of(".")).build(), 1000);
    assertThat(o.ok()).isTrue();
    assertThat(o.request().promptIds()).containsExactly(1, 403, 407, 261, 378);
    assertThat(o.request().req().namespace()).isEqualTo("acme");
    assertThat(o.request().req().maxNewTokens()).isEqualTo(20);
    assertThat(o.request().req().params().topLogprobs()).isZero();
    assertThat(
            validator
                .validate(base().setTopLogprobs(3).build(), 1000)
                .request()
                .req()
                .params()
                .topLogprobs())
        .isEqualTo(3);
    assertThat(o.request().req().params().responseFormat()).isEqualTo(ResponseFormat.TEXT);
    SamplingParams biased =
        validator
            .validate(base().setLogitBias(Map.of("9", -100f, "3", 5f)).build(), 1000)
            .request()
            .req()
            .params();
    assertThat(biased.biasCount()).isEqualTo(2);
    assertThat(new int[] {biased.biasedToken(0), biased.biasedToken(1)}).containsExactly(3, 9);
    assertThat(new float[] {biased.bias(0), biased.bias(1)}).containsExactly(5f, -100f);
    assertThat(
            validator
                .validate(base().setResponseFormat("json_object").build(), 1000)
                .request()
                .req()
                .params()
                .responseFormat())
        .isEqualTo(ResponseFormat.JSON_OBJECT);
    assertThat(
            validator
                .validate(
                    base()
                        .setResponseFormat("json_schema")
                        .setJsonSchema("{\"type\": \"object\"}")
                        .build(),
                    1000)
                .request()
                .req()
                .params()
                .jsonSchema())
        .isEqualTo("{\"type\": \"object\"}");
    long seed = o.request().req().params().seed();
    assertThat(validator.validate(base().build(), 1000).request().req().params().seed())
        .isEqualTo(seed);
    assertThat(
            validator
                .validate(base().setRequestId("r2").build(), 1000)
                .request()
                .req()
                .params()
                .seed())
        .isNotEqualTo(seed);
    assertThat(
            validator
                .validate(
                    base().setSampling(SamplingOptions.newBuilder().setSeed(5L).build()).build(),
                    1000)
                .request()
                .req()
                .params()
                .seed())
        .isEqualTo(5L);
  }

  @Test
  void tokenIdsAreTakenAsGiven() {
    RequestValidator.Outcome o =
        validator.validate(
            PromptRequest.newBuilder().setRequestId("r").setPromptTokenIds(List.of(1, 403)).build(),
            0);
    assertThat(o.request().promptIds()).containsExactly(1, 403);
  }

  @Test
  void everyInvalidRequestSaysWhy() {
    assertThat(error(base().setPrompt("").build())).isEqualTo("the prompt is empty");
    assertThat(error(base().setPrompt(null).build()))
        .isEqualTo("the prompt is missing (prompt, prompt_token_ids or messages)");
    assertThat(error(base().setPromptTokenIds(List.of(1)).build()))
        .isEqualTo("give one of prompt, prompt_token_ids and messages, not several");
    assertThat(error(base().setPrompt(null).setPromptTokenIds(List.of(1, 9999)).build()))
        .isEqualTo("prompt token 9999 at 1 is outside the vocabulary of 512");
    assertThat(error(base().setPrompt("Lily ".repeat(600)).build()))
        .matches("the prompt has \\d+ tokens; the context holds 512");
    assertThat(error(base().setMaxNewTokens(0).build()))
        .isEqualTo("max_new_tokens must be in [1, 256], got 0");
    assertThat(
            error(
                base()
                    .setSampling(SamplingOptions.newBuilder().setTemperature(-1f).build())
                    .build()))
        .contains("temperature");
    assertThat(error(base().setSampling(SamplingOptions.newBuilder().setTopP(0f).build()).build()))
        .contains("top_p");
    assertThat(error(base().setTopLogprobs(21).build()))
        .isEqualTo("top_logprobs must be in [0, 20], got 21");
    assertThat(error(base().setResponseFormat("yaml").build()))
        .isEqualTo(
            "response_format must be \"text\", \"json_object\", \"json_schema\", \"regex\" or"
                + " \"grammar\","
                + " got \"yaml\"");
    assertThat(error(base().setMaxNewTokens(10).setMinNewTokens(11).build()))
        .isEqualTo("min_new_tokens must be in [0, max_new_tokens = 10], got 11");
    assertThat(
            validator
                .validate(base().setMinNewTokens(4).build(), 1000)
                .request()
                .req()
                .params()
                .minTokens())
        .isEqualTo(4);
    assertThat(error(base().setLogitBias(Map.of("x", 1f)).build()))
        .isEqualTo("logit_bias keys must be token ids, got 'x'");
    assertThat(error(base().setLogitBias(Map.of("512", 1f)).build()))
        .isEqualTo("logit_bias token 512 is outside the vocabulary of 512");
    assertThat(error(base().setLogitBias(Map.of("5", 100.5f)).build()))
        .isEqualTo("logit_bias must be in [-100, 100], got 100.5 for token 5");
    assertThat(error(base().setResponseFormat("json_schema").build()))
        .isEqualTo("json_schema is given with response_format json_schema, and only then");
    assertThat(
            error(
                base()
                    .setResponseFormat("json_schema")
                    .setJsonSchema("{\"type\": \"object\", \"not\": {}}")
                    .build()))
        .isEqualTo("json_schema at #/not: keyword not is not supported");
    assertThat(error(base().setRegex("yes|no").build()))
        .isEqualTo("regex is given with response_format regex, and only then");
    assertThat(error(base().setResponseFormat("regex").setRegex("(?<=a)b").build()))
        .isEqualTo("regex (?<=a)b is not supported: lookaround and named groups are not supported");
    assertThat(error(base().setResponseFormat("grammar").setGrammar("root ::= root \"a\"").build()))
        .isEqualTo(
            "grammar: rule root can call itself before reading a character (left recursion)");
    assertThat(error(base().setGrammar("root ::= \"a\"").build()))
        .isEqualTo("grammar is given with response_format grammar, and only then");
    assertThat(error(base().setResponseFormat("regex").setRegex("(yes").build()))
        .startsWith("regex (yes is not a regular expression: ");
    assertThat(
            validator
                .validate(base().setResponseFormat("regex").setRegex("yes|no").build(), 1000)
                .request()
                .req()
                .params()
                .regex())
        .isEqualTo("yes|no");
    assertThat(error(base().setStop(List.of("")).build()))
        .isEqualTo("stop strings must not be empty");
    assertThat(error(base().setDeadlineEpochMs(500L).build())).isEqualTo("deadline 500 has passed");
    assertThat(error(base().setRequestId("").build())).isEqualTo("request_id is empty");
    RequestValidator strict =
        new RequestValidator(
            model.tokenizer(),
            512,
            RequestLimits.builder().maxNewTokens(256).build(),
            Set.of("acme"));
    assertThat(strict.validate(base().setTenant("evil").build(), 0).error())
        .isEqualTo("unknown tenant 'evil'");
  }

  @Test
  void everyFieldIsBoundedAndTheErrorNamesTheLimitWithoutEchoingTheValue() {
    String huge = "x".repeat(600_000);
    RequestValidator.Outcome id = validator.validate(base().setRequestId(huge).build(), 0);
    assertThat(id.rejection()).isEqualTo(Rejection.LIMIT_EXCEEDED);
    assertThat(id.error()).isEqualTo("request_id is 600000 bytes; the limit is 256");
    assertThat(error(base().setTenant(huge).build())).startsWith("tenant is 600000 bytes");
    assertThat(error(base().setRoutingKey(huge).build())).startsWith("routing_key is");
    Map<String, String> many = new HashMap<>();
    for (int i = 0; i < 20_000; i++) {
      many.put("k" + i, "v");
    }
    assertThat(error(base().setMetadata(many).build()))
        .isEqualTo("metadata has 20000 entries; the limit is 32");
    assertThat(error(base().setMetadata(Map.of("k", huge)).build()))
        .isEqualTo("metadata is 600001 bytes; the limit is 16384");
    assertThat(error(base().setStop(Collections.nCopies(17, "a")).build()))
        .isEqualTo("stop has 17 strings; the limit is 16");
    assertThat(error(base().setStop(List.of("y".repeat(300))).build()))
        .isEqualTo("a stop string is 300 bytes; the limit is 256");
    assertThat(error(base().setStopTokenIds(Collections.nCopies(65, 5)).build()))
        .isEqualTo("stop_token_ids has 65 ids; the limit is 64");
    // The prompt is measured before it is tokenized: 32 bytes per context token by default.
    RequestValidator.Outcome prompt = validator.validate(base().setPrompt(huge).build(), 0);
    assertThat(prompt.rejection()).isEqualTo(Rejection.LIMIT_EXCEEDED);
    assertThat(prompt.error()).isEqualTo("the prompt is 600000 bytes; the limit is 16384");
    // Multi-byte characters count as their UTF-8 bytes.
    assertThat(error(base().setRequestId("é".repeat(129)).build()))
        .isEqualTo("request_id is 258 bytes; the limit is 256");
    assertThat(error(base().setTenant("evil".repeat(100)).build())).doesNotContain("evilevil");
  }

  @Test
  void outOfVocabularyStopTokensAreAnError() {
    RequestValidator.Outcome o =
        validator.validate(base().setStopTokenIds(List.of(512)).build(), 0);
    assertThat(o.rejection()).isEqualTo(Rejection.INVALID_REQUEST);
    assertThat(o.error()).isEqualTo("stop token 512 is outside the vocabulary of 512");
  }

  @Test
  void limitsThatCouldNotHoldADeadLetterAreRefused() {
    assertThatThrownBy(() -> RequestLimits.builder().maxRecordBytes(4096).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("dead letters");
  }

  @Test
  void conversationsRenderThroughTheModelsTemplateOrSayWhyNot() {
    ChatTemplate turns =
        new ChatTemplate(
            "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}{% endfor %}"
                + "{% if add_generation_prompt %}<|assistant|>{% endif %}",
            "", "");
    LlamaModel chatty =
        new LlamaModel(
            model.id(), model.config(), model.weights(), model.tokenizer(), Optional.of(turns));
    RequestValidator v = RequestValidator.forModel(chatty, RequestLimits.defaults(), Set.of());
    PromptRequest chat =
        PromptRequest.newBuilder()
            .setRequestId("c")
            .setMessages(
                List.of(new ChatMessage("user", "Once upon a time", List.of(), null, null)))
            .build();
    RequestValidator.Outcome ok = v.validate(chat, 0);
    assertThat(ok.ok()).isTrue();
    assertThat(model.tokenizer().decode(ok.request().promptIds()))
        .isEqualTo("<|user|>Once upon a time<|assistant|>");

    assertThat(validator.validate(chat, 0).error())
        .isEqualTo("the model has no chat template: send prompt or prompt_token_ids");
    assertThat(v.validate(PromptRequest.newBuilder(chat).setPrompt("x").build(), 0).error())
        .isEqualTo("give one of prompt, prompt_token_ids and messages, not several");
    LlamaModel refusing =
        new LlamaModel(
            model.id(),
            model.config(),
            model.weights(),
            model.tokenizer(),
            Optional.of(new ChatTemplate("{{ raise_exception('roles must alternate') }}", "", "")));
    RequestValidator.Outcome refused =
        RequestValidator.forModel(refusing, RequestLimits.defaults(), Set.of()).validate(chat, 0);
    assertThat(refused.rejection()).isEqualTo(Rejection.INVALID_REQUEST);
    assertThat(refused.error()).isEqualTo("chat template: roles must alternate");
  }

  @Test
  void toolsAndToolCallsReachTheTemplateOrAreRefusedWithAReason() {
    ChatTemplate withTools =
        new ChatTemplate(
            "{% for t in tools %}[{{ t.function.name }}]{% endfor %}"
                + "{% for m in messages %}<|{{ m.role }}|>{{ m.content }}"
                + "{% for c in m.tool_calls %}({{ c.function.name }} {{ c.function.arguments | tojson }})"
                + "{% endfor %}{% endfor %}",
            "", "");
    LlamaModel chatty =
        new LlamaModel(
            model.id(), model.config(), model.weights(), model.tokenizer(), Optional.of(withTools));
    RequestValidator v = RequestValidator.forModel(chatty, RequestLimits.defaults(), Set.of());
    PromptRequest chat =
        PromptRequest.newBuilder()
            .setRequestId("t")
            .setTools("[{\"type\": \"function\", \"function\": {\"name\": \"add\"}}]")
            .setMessages(
                List.of(
                    new ChatMessage("user", "Add", List.of(), null, null),
                    new ChatMessage(
                        "assistant",
                        "",
                        List.of(new io.flinfer.avro.ToolCall("c1", "add", "{\"a\":1,\"b\":2}")),
                        null,
                        null),
                    new ChatMessage("tool", "3", List.of(), "c1", null)))
            .build();
    RequestValidator.Outcome ok = v.validate(chat, 0);
    assertThat(ok.ok()).isTrue();
    assertThat(model.tokenizer().decode(ok.request().promptIds()))
        .isEqualTo("[add]<|user|>Add<|assistant|>(add {\"a\": 1, \"b\": 2})<|tool|>3");

    assertThat(v.validate(PromptRequest.newBuilder(chat).setTools("{}").build(), 0).error())
        .isEqualTo("chat template: tools must be a JSON array");
    PromptRequest prompted =
        PromptRequest.newBuilder(chat).setMessages(null).setPrompt("Once").build();
    assertThat(v.validate(prompted, 0).error())
        .isEqualTo("tools are given to the model with messages, not with a prompt");
    LlamaModel plain =
        new LlamaModel(
            model.id(),
            model.config(),
            model.weights(),
            model.tokenizer(),
            Optional.of(
                new ChatTemplate("{% for m in messages %}{{ m.content }}{% endfor %}", "", "")));
    assertThat(
            RequestValidator.forModel(plain, RequestLimits.defaults(), Set.of())
                .validate(chat, 0)
                .error())
        .isEqualTo("the model's chat template does not take tools");
  }

  @Test
  void templateSwitchesAndReasoningReachTheTemplateOrAreRefusedWithAReason() {
    ChatTemplate thinking =
        new ChatTemplate(
            "{% for m in messages %}<|{{ m.role }}|>"
                + "{% if m.reasoning_content is defined %}<think>{{ m.reasoning_content }}</think>"
                + "{% endif %}{{ m.content }}{% endfor %}"
                + "{% if add_generation_prompt %}<|assistant|>"
                + "{% if enable_thinking is defined and enable_thinking is false %}<think></think>"
                + "{% endif %}{% endif %}",
            "", "");
    LlamaModel chatty =
        new LlamaModel(
            model.id(), model.config(), model.weights(), model.tokenizer(), Optional.of(thinking));
    RequestValidator v = RequestValidator.forModel(chatty, RequestLimits.defaults(), Set.of());
    PromptRequest chat =
        PromptRequest.newBuilder()
            .setRequestId("k")
            .setChatTemplateKwargs("{\"enable_thinking\": false}")
            .setMessages(
                List.of(
                    new ChatMessage("user", "Hi", List.of(), null, null),
                    new ChatMessage("assistant", "Hello", List.of(), null, "greet"),
                    new ChatMessage("user", "Bye", List.of(), null, null)))
            .build();
    RequestValidator.Outcome ok = v.validate(chat, 0);
    assertThat(ok.ok()).isTrue();
    assertThat(model.tokenizer().decode(ok.request().promptIds()))
        .isEqualTo(
            "<|user|>Hi<|assistant|><think>greet</think>Hello<|user|>Bye<|assistant|><think></think>");

    assertThat(
            v.validate(PromptRequest.newBuilder(chat).setChatTemplateKwargs("[1]").build(), 0)
                .error())
        .isEqualTo("chat template: chat_template_kwargs must be a JSON object");
    assertThat(
            v.validate(
                    PromptRequest.newBuilder(chat)
                        .setChatTemplateKwargs("{\"messages\": 1}")
                        .build(),
                    0)
                .error())
        .isEqualTo(
            "chat template: chat_template_kwargs may not set messages, which the renderer sets");
    PromptRequest prompted =
        PromptRequest.newBuilder(chat).setMessages(null).setPrompt("Once").build();
    assertThat(v.validate(prompted, 0).error())
        .isEqualTo("chat_template_kwargs go with messages, not with a prompt");

    // A thinking budget: free text may then think (the template opens no thought here), and
    // the cap reaches the sampler; without messages or below 0 it is refused.
    PromptRequest capped =
        PromptRequest.newBuilder(chat)
            .setChatTemplateKwargs(null)
            .setThinkingTokenBudget(16)
            .build();
    SamplingParams params = v.validate(capped, 0).request().req().params();
    assertThat(params.thinkingBudget()).isEqualTo(16);
    assertThat(params.thinking()).isEqualTo(Thinking.MAY_OPEN);
    assertThat(params.outputShape()).isNull();
    assertThat(v.validate(chat, 0).request().req().params().thinking()).isEqualTo(Thinking.NONE);
    assertThat(
            v.validate(PromptRequest.newBuilder(capped).setThinkingTokenBudget(-1).build(), 0)
                .error())
        .isEqualTo("thinking_token_budget must be >= 0, got -1");
    assertThat(
            v.validate(
                    PromptRequest.newBuilder(capped).setMessages(null).setPrompt("Once").build(), 0)
                .error())
        .isEqualTo("thinking_token_budget goes with messages, not with a prompt");
  }

  @Test
  void promptLogprobsGoWithStreamAndAreBounded() {
    assertThat(validator.validate(base().build(), 0).request().req().promptLogprobs())
        .isEqualTo(-1);
    assertThat(
            validator
                .validate(base().setStream(true).setPromptLogprobs(3).build(), 0)
                .request()
                .req()
                .promptLogprobs())
        .isEqualTo(3);
    assertThat(error(base().setPromptLogprobs(0).build()))
        .isEqualTo("prompt_logprobs needs stream: they are sent on the chunks topic");
    assertThat(error(base().setStream(true).setPromptLogprobs(21).build()))
        .isEqualTo("prompt_logprobs must be between 0 and 20, got 21");
    assertThat(error(base().setStream(true).setPromptLogprobs(-1).build()))
        .isEqualTo("prompt_logprobs must be between 0 and 20, got -1");
  }
}
