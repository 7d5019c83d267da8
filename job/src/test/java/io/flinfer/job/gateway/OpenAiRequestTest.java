package io.flinfer.job.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.entry;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.flinfer.avro.CompletionChunk;
import io.flinfer.avro.PromptRequest;
import java.util.List;
import org.junit.jupiter.api.Test;

class OpenAiRequestTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  private static OpenAiRequest parse(String body, boolean chat) throws Exception {
    return OpenAiRequest.parse(JSON.readTree(body), chat, "m");
  }

  @Test
  void parametersMapToThePromptRecord() throws Exception {
    OpenAiRequest r =
        parse(
            "{\"model\": \"m\", \"messages\": [{\"role\": \"developer\", \"content\": \"Be brief\"},"
                + " {\"role\": \"user\", \"content\": [{\"type\": \"text\", \"text\": \"Hi\"}]}],"
                + " \"max_completion_tokens\": 7, \"temperature\": 0.5, \"top_p\": 0.9,"
                + " \"seed\": 42, \"stop\": [\"a\", \"b\"], \"user\": \"u1\", \"stream\": true,"
                + " \"stream_options\": {\"include_usage\": true}, \"top_k\": 5}",
            true);
    PromptRequest p = r.record("id-1", "acme", 0);
    assertThat(p.getRequestId()).isEqualTo("id-1");
    assertThat(p.getTenant()).isEqualTo("acme");
    assertThat(p.getMessages())
        .extracting(m -> m.getRole() + ":" + m.getContent())
        .containsExactly("system:Be brief", "user:Hi");
    assertThat(p.getMaxNewTokens()).isEqualTo(7);
    assertThat(p.getSampling().getTemperature()).isEqualTo(0.5f);
    assertThat(p.getSampling().getTopP()).isEqualTo(0.9f);
    assertThat(p.getSampling().getTopK()).isEqualTo(5);
    assertThat(p.getSampling().getSeed()).isEqualTo(42L);
    assertThat(p.getStop()).containsExactly("a", "b");
    assertThat(p.getMetadata()).containsEntry("user", "u1");
    assertThat(r.user).isEqualTo("u1");
    assertThat(r.stream).isTrue();
    assertThat(r.includeUsage).isTrue();
    // Completions default to OpenAI's 16 tokens.
    assertThat(
            parse("{\"model\": \"m\", \"prompt\": [\"x\"]}", false)
                .record("i", "", 0)
                .getMaxNewTokens())
        .isEqualTo(16);
  }

  @Test
  void whatCannotBeHonouredIsA400NamingTheParameter() throws Exception {
    for (String n : new String[] {"0", "17", "1.5", "\"2\""}) {
      assertThatThrownBy(
              () -> parse("{\"model\": \"m\", \"prompt\": \"x\", \"n\": " + n + "}", false))
          .as("n = %s", n)
          .isInstanceOfSatisfying(ApiError.class, e -> assertThat(e.param).isEqualTo("n"));
    }
    assertThatThrownBy(
            () -> parse("{\"model\": \"m\", \"prompt\": \"x\", \"n\": 2, \"best_of\": 3}", false))
        .isInstanceOfSatisfying(ApiError.class, e -> assertThat(e.param).isEqualTo("best_of"));
    // The last choice's seed must stay below 2^53, the job's bound.
    assertThatThrownBy(
            () ->
                parse(
                    "{\"model\": \"m\", \"prompt\": \"x\", \"n\": 3, \"seed\": "
                        + ((1L << 53) - 2)
                        + "}",
                    false))
        .isInstanceOfSatisfying(ApiError.class, e -> assertThat(e.param).isEqualTo("seed"));
    assertThatThrownBy(() -> parse("{\"model\": \"m\", \"prompt\": \"x\", \"tools\": []}", false))
        .isInstanceOfSatisfying(
            ApiError.class,
            e -> {
              assertThat(e.param).isEqualTo("tools");
              assertThat(e.code).isEqualTo("unsupported_parameter");
            });
    assertThatThrownBy(() -> parse("{\"model\": \"m\", \"prompt\": \"x\", \"logprobs\": 6}", false))
        .isInstanceOfSatisfying(ApiError.class, e -> assertThat(e.param).isEqualTo("logprobs"));
    assertThat(parse("{\"model\": \"m\", \"prompt\": \"x\", \"logprobs\": 0}", false).logprobs)
        .isTrue();
    assertThatThrownBy(
            () ->
                parse(
                    "{\"model\": \"m\", \"messages\": [{\"role\": \"user\", \"content\": \"x\"}],"
                        + " \"top_logprobs\": 2}",
                    true))
        .as("alternatives need logprobs")
        .isInstanceOfSatisfying(ApiError.class, e -> assertThat(e.param).isEqualTo("top_logprobs"));
    assertThatThrownBy(
            () ->
                parse(
                    "{\"model\": \"m\", \"messages\": [{\"role\": \"user\", \"content\": \"x\"}],"
                        + " \"logprobs\": true, \"top_logprobs\": 21}",
                    true))
        .isInstanceOfSatisfying(ApiError.class, e -> assertThat(e.param).isEqualTo("top_logprobs"));
    assertThatThrownBy(
            () -> parse("{\"model\": \"m\", \"prompt\": \"x\", \"temperature\": 3}", false))
        .isInstanceOfSatisfying(ApiError.class, e -> assertThat(e.param).isEqualTo("temperature"));
    assertThatThrownBy(() -> parse("{\"model\": \"other\", \"prompt\": \"x\"}", false))
        .isInstanceOfSatisfying(ApiError.class, e -> assertThat(e.status).isEqualTo(404));
    assertThatThrownBy(() -> parse("{\"prompt\": \"x\"}", false))
        .isInstanceOfSatisfying(ApiError.class, e -> assertThat(e.param).isEqualTo("model"));
    // Echo with logprobs asks for the prompt's too (as many alternatives), answered whole.
    OpenAiRequest scored =
        parse("{\"model\": \"m\", \"prompt\": \"x\", \"echo\": true, \"logprobs\": 2}", false);
    assertThat(scored.promptLogprobs()).isTrue();
    assertThat(scored.record("id", "", 0).getPromptLogprobs()).isEqualTo(2);
    assertThat(scored.record("id", "", 0).getTopLogprobs()).isEqualTo(2);
    assertThat(
            parse("{\"model\": \"m\", \"prompt\": \"x\", \"logprobs\": 2}", false)
                .record("id", "", 0)
                .getPromptLogprobs())
        .isNull();
    // Streamed too: the prompt's log-probabilities go with its text.
    assertThat(
            parse(
                    "{\"model\": \"m\", \"prompt\": \"x\", \"echo\": true, \"logprobs\": 1,"
                        + " \"stream\": true}",
                    false)
                .promptLogprobs())
        .isTrue();
    assertThat(parse("{\"model\": \"m\", \"prompt\": \"x\", \"echo\": true}", false).echo(0))
        .isEqualTo("x");
    assertThatThrownBy(
            () -> parse("{\"model\": \"m\", \"messages\": [{\"role\": \"robot\"}]}", true))
        .isInstanceOfSatisfying(
            ApiError.class, e -> assertThat(e.param).isEqualTo("messages[0].role"));
  }

  @Test
  void alternativesAreAskedOfTheJob() throws Exception {
    OpenAiRequest chat =
        parse(
            "{\"model\": \"m\", \"messages\": [{\"role\": \"user\", \"content\": \"x\"}],"
                + " \"logprobs\": true, \"top_logprobs\": 20}",
            true);
    assertThat(chat.logprobs).isTrue();
    assertThat(chat.record("i", "", 0).getTopLogprobs()).isEqualTo(20);
    OpenAiRequest completion =
        parse("{\"model\": \"m\", \"prompt\": \"x\", \"logprobs\": 3}", false);
    assertThat(completion.logprobs).isTrue();
    assertThat(completion.record("i", "", 0).getTopLogprobs()).isEqualTo(3);
    assertThat(
            parse("{\"model\": \"m\", \"prompt\": \"x\"}", false)
                .record("i", "", 0)
                .getTopLogprobs())
        .isZero();
  }

  @Test
  void aResponseFormatIsAskedOfTheJobAndOnlyTextOrJsonObject() throws Exception {
    String chat = "{\"model\": \"m\", \"messages\": [{\"role\": \"user\", \"content\": \"x\"}]";
    assertThat(
            parse(chat + ", \"response_format\": {\"type\": \"json_object\"}}", true)
                .record("i", "", 0)
                .getResponseFormat())
        .isEqualTo("json_object");
    assertThat(
            parse(
                    "{\"model\": \"m\", \"prompt\": \"x\", \"response_format\": {\"type\": \"text\"}}",
                    false)
                .record("i", "", 0)
                .getResponseFormat())
        .isEqualTo("text");
    assertThat(parse(chat + "}", true).record("i", "", 0).getResponseFormat()).isEqualTo("text");
    PromptRequest schema =
        parse(
                chat
                    + ", \"response_format\": {\"type\": \"json_schema\", \"json_schema\":"
                    + " {\"name\": \"p\", \"strict\": true, \"schema\": {\"type\": \"object\","
                    + " \"properties\": {\"a\": {\"type\": \"integer\"}}}}}}",
                true)
            .record("i", "", 0);
    assertThat(schema.getResponseFormat()).isEqualTo("json_schema");
    assertThat(schema.getJsonSchema())
        .isEqualTo("{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"integer\"}}}");
    for (String bad :
        new String[] {
          "\"json\"",
          "{}",
          "{\"type\": \"yaml\"}",
          "{\"type\": \"json_schema\", \"json_schema\": {}}"
        }) {
      assertThatThrownBy(() -> parse(chat + ", \"response_format\": " + bad + "}", true))
          .as(bad)
          .isInstanceOfSatisfying(
              ApiError.class, e -> assertThat(e.param).isEqualTo("response_format"));
    }
  }

  /**
   * SGLang's regex and vLLM's regex and choice parameters become a regex response format (a choice
   * the regex of exactly its texts), vLLM's JSON ones a JSON format; two of them, one beside a
   * response_format, or a regex or schema that is not supported, are a 400 naming the parameter.
   */
  @Test
  void structuredOutputParametersAreAskedOfTheJobAsAResponseFormat() throws Exception {
    String chat = "{\"model\": \"m\", \"messages\": [{\"role\": \"user\", \"content\": \"x\"}]";
    String prompt = "{\"model\": \"m\", \"prompt\": \"x\"";
    for (String[] given :
        new String[][] {
          {"\"regex\": \"(yes|no)!\"", "(yes|no)!"},
          {"\"guided_regex\": \"[0-9]+\"", "[0-9]+"},
          {"\"guided_choice\": [\"a.b\", \"c\"]", "a\\.b|c"},
          {"\"structured_outputs\": {\"choice\": [\"yes\", \"no\"]}", "yes|no"},
          {"\"structured_outputs\": {\"regex\": \"x+\", \"json\": null}", "x+"},
          {"\"structured_outputs\": {\"regex\": \"x+\", \"json_object\": false}", "x+"}
        }) {
      for (boolean isChat : new boolean[] {true, false}) {
        PromptRequest r =
            parse((isChat ? chat : prompt) + ", " + given[0] + "}", isChat).record("i", "", 0);
        assertThat(r.getResponseFormat()).as(given[0]).isEqualTo("regex");
        assertThat(r.getRegex()).as(given[0]).isEqualTo(given[1]);
      }
    }
    // vLLM's JSON forms: a schema as an object or as text, and any object.
    String schema = "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"integer\"}}}";
    for (String given :
        List.of(
            "\"guided_json\": " + schema,
            "\"structured_outputs\": {\"json\": " + schema + "}",
            "\"structured_outputs\": {\"json\": " + JSON.writeValueAsString(schema) + "}")) {
      PromptRequest r = parse(chat + ", " + given + "}", true).record("i", "", 0);
      assertThat(r.getResponseFormat()).as(given).isEqualTo("json_schema");
      assertThat(JSON.readTree(r.getJsonSchema())).as(given).isEqualTo(JSON.readTree(schema));
    }
    // Grammars: SGLang's ebnf, vLLM's grammar and guided_grammar.
    for (String given :
        List.of(
            "\"ebnf\": \"root ::= [0-9]+\"",
            "\"guided_grammar\": \"root ::= [0-9]+\"",
            "\"structured_outputs\": {\"grammar\": \"root ::= [0-9]+\"}")) {
      PromptRequest r = parse(prompt + ", " + given + "}", false).record("i", "", 0);
      assertThat(r.getResponseFormat()).as(given).isEqualTo("grammar");
      assertThat(r.getGrammar()).as(given).isEqualTo("root ::= [0-9]+");
    }
    assertThat(
            parse(chat + ", \"structured_outputs\": {\"json_object\": true}}", true)
                .record("i", "", 0)
                .getResponseFormat())
        .isEqualTo("json_object");
    for (String[] bad :
        new String[][] {
          {"\"guided_json\": {\"type\": \"object\", \"not\": {}}", "guided_json"},
          {"\"guided_json\": 3", "guided_json"},
          {"\"regex\": \"a\", \"guided_choice\": [\"b\"]", "guided_choice"},
          {"\"regex\": \"a\", \"response_format\": {\"type\": \"json_object\"}", "regex"},
          {"\"regex\": \"(?=a)a\"", "regex"},
          {"\"regex\": 5", "regex"},
          {"\"guided_choice\": []", "guided_choice"},
          {"\"structured_outputs\": {\"grammar\": \"root ::= x\"}", "structured_outputs.grammar"},
          {"\"ebnf\": \"root ::= root \\\"a\\\"\"", "ebnf"},
          {"\"structured_outputs\": {\"whitespace\": \"x\"}", "structured_outputs.whitespace"},
          {"\"structured_outputs\": {}", "structured_outputs"},
          {
            "\"structured_outputs\": {\"regex\": \"a\", \"choice\": [\"b\"]}",
            "structured_outputs.choice"
          },
          {"\"response_format\": {\"type\": \"regex\"}", "response_format"}
        }) {
      assertThatThrownBy(() -> parse(chat + ", " + bad[0] + "}", true))
          .as(bad[0])
          .isInstanceOfSatisfying(ApiError.class, e -> assertThat(e.param).isEqualTo(bad[1]));
    }
  }

  @Test
  void logitBiasIsAskedOfTheJobWithinItsBounds() throws Exception {
    assertThat(
            parse(
                    "{\"model\": \"m\", \"prompt\": \"x\", \"logit_bias\": {\"42\": -100,"
                        + " \"7\": 2.5}}",
                    false)
                .record("i", "", 0)
                .getLogitBias())
        .containsExactly(entry("42", -100f), entry("7", 2.5f));
    assertThat(
            parse("{\"model\": \"m\", \"prompt\": \"x\"}", false).record("i", "", 0).getLogitBias())
        .isEmpty();
    for (String bad :
        new String[] {"[1]", "{\"a\": 1}", "{\"-1\": 1}", "{\"5\": 101}", "{\"5\": \"1\"}"}) {
      assertThatThrownBy(
              () ->
                  parse(
                      "{\"model\": \"m\", \"prompt\": \"x\", \"logit_bias\": " + bad + "}", false))
          .as(bad)
          .isInstanceOfSatisfying(ApiError.class, e -> assertThat(e.param).isEqualTo("logit_bias"));
    }
  }

  @Test
  void stopTokenIdsAndMinTokensAreAskedOfTheJob() throws Exception {
    assertThat(
            parse("{\"model\": \"m\", \"prompt\": \"x\", \"stop_token_ids\": [7, 42]}", false)
                .record("i", "", 0)
                .getStopTokenIds())
        .containsExactly(7, 42);
    assertThat(
            parse("{\"model\": \"m\", \"prompt\": \"x\", \"min_tokens\": 3}", false)
                .record("i", "", 0)
                .getMinNewTokens())
        .isEqualTo(3);
    for (String min : new String[] {"-1", "17", "1.5"}) {
      // Completions default to 16 tokens.
      assertThatThrownBy(
              () ->
                  parse(
                      "{\"model\": \"m\", \"prompt\": \"x\", \"min_tokens\": " + min + "}", false))
          .as(min)
          .isInstanceOfSatisfying(ApiError.class, e -> assertThat(e.param).isEqualTo("min_tokens"));
    }
    for (String bad : new String[] {"7", "[-1]", "[1.5]", "[\"7\"]"}) {
      assertThatThrownBy(
              () ->
                  parse(
                      "{\"model\": \"m\", \"prompt\": \"x\", \"stop_token_ids\": " + bad + "}",
                      false))
          .as(bad)
          .isInstanceOfSatisfying(
              ApiError.class, e -> assertThat(e.param).isEqualTo("stop_token_ids"));
    }
  }

  /**
   * A completions prompt may be token ids, or several prompts (strings or token ids): choice k is
   * completion k % n of prompt k / n, each what a request of that prompt alone gets.
   */
  @Test
  void promptsMayBeTokenIdsOrSeveral() throws Exception {
    assertThat(parse("{\"model\": \"m\", \"prompt\": [1, 15043]}", false).record("i", "", 0))
        .satisfies(
            p -> {
              assertThat(p.getPrompt()).isNull();
              assertThat(p.getPromptTokenIds()).containsExactly(1, 15043);
            });
    OpenAiRequest r =
        parse(
            "{\"model\": \"m\", \"prompt\": [\"a\", [5, 6], \"c\"], \"n\": 2, \"seed\": 7,"
                + " \"max_tokens\": 3}",
            false);
    assertThat(r.choices).isEqualTo(6);
    assertThat(r.perPrompt).isEqualTo(2);
    for (int k = 0; k < 6; k++) {
      PromptRequest p = r.record("i-" + k, "", k);
      assertThat(p.getMaxNewTokens()).isEqualTo(3);
      assertThat(p.getSampling().getSeed()).isEqualTo(7 + k % 2);
      if (k / 2 == 1) {
        assertThat(p.getPromptTokenIds()).containsExactly(5, 6);
        assertThat(p.getPrompt()).isNull();
      } else {
        assertThat(p.getPrompt()).isEqualTo(k / 2 == 0 ? "a" : "c");
        assertThat(p.getPromptTokenIds()).isNull();
      }
    }
    OpenAiRequest echoed =
        parse("{\"model\": \"m\", \"prompt\": [\"a\", \"b\"], \"n\": 2, \"echo\": true}", false);
    assertThat(List.of(echoed.echo(0), echoed.echo(1), echoed.echo(2), echoed.echo(3)))
        .containsExactly("a", "a", "b", "b");
    for (String[] bad :
        new String[][] {
          {"[]", "prompt"},
          {"[\"a\", 5]", "prompt[1]"},
          {"[[]]", "prompt[0]"},
          {"[1.5]", "prompt"},
          {"[[1, \"x\"]]", "prompt[0]"},
          {"{\"a\": 1}", "prompt"},
        }) {
      assertThatThrownBy(() -> parse("{\"model\": \"m\", \"prompt\": " + bad[0] + "}", false))
          .as(bad[0])
          .isInstanceOfSatisfying(ApiError.class, e -> assertThat(e.param).isEqualTo(bad[1]));
    }
    // max_tokens 0 with echo: the prompt alone (the job writes one token, left out).
    OpenAiRequest only =
        parse("{\"model\": \"m\", \"prompt\": \"x\", \"echo\": true, \"max_tokens\": 0}", false);
    assertThat(only.promptOnly).isTrue();
    assertThat(only.record("id", "", 0).getMaxNewTokens()).isEqualTo(1);
    for (String bad :
        List.of(
            "\"max_tokens\": 0",
            "\"max_tokens\": 0, \"echo\": true, \"stream\": true",
            "\"max_tokens\": -1, \"echo\": true")) {
      assertThatThrownBy(() -> parse("{\"model\": \"m\", \"prompt\": \"x\", " + bad + "}", false))
          .as(bad)
          .isInstanceOfSatisfying(ApiError.class, e -> assertThat(e.param).isEqualTo("max_tokens"));
    }
    // vLLM's prompt_logprobs: 0-20, streamed or whole, not beside echo with logprobs.
    assertThat(
            parse("{\"model\": \"m\", \"prompt\": \"x\", \"prompt_logprobs\": 3}", false)
                .record("id", "", 0)
                .getPromptLogprobs())
        .isEqualTo(3);
    for (String bad :
        List.of(
            "\"prompt_logprobs\": 21", "\"prompt_logprobs\": 1, \"echo\": true, \"logprobs\": 1")) {
      assertThatThrownBy(() -> parse("{\"model\": \"m\", \"prompt\": \"x\", " + bad + "}", false))
          .as(bad)
          .isInstanceOfSatisfying(
              ApiError.class, e -> assertThat(e.param).isEqualTo("prompt_logprobs"));
    }
    // Token ids echo as their text.
    OpenAiRequest ids =
        parse("{\"model\": \"m\", \"prompt\": [[1, 2], \"b\"], \"echo\": true}", false);
    ids.decodeEchoes(t -> java.util.Arrays.toString(t));
    assertThat(List.of(ids.echo(0), ids.echo(1))).containsExactly("[1, 2]", "b");
    String many = "[" + "\"p\", ".repeat(32) + "\"p\"]";
    assertThatThrownBy(() -> parse("{\"model\": \"m\", \"prompt\": " + many + ", \"n\": 2}", false))
        .isInstanceOfSatisfying(ApiError.class, e -> assertThat(e.param).isEqualTo("prompt"));
  }

  @Test
  void eachChoiceIsARecordOfItsOwnWithTheNextSeed() throws Exception {
    OpenAiRequest r =
        parse(
            "{\"model\": \"m\", \"prompt\": \"x\", \"n\": 3, \"best_of\": 3, \"seed\": "
                + ((1L << 53) - 3)
                + "}",
            false);
    assertThat(r.choices).isEqualTo(3);
    Choices choices = new Choices("oai-1", r.choices);
    assertThat(choices.ids()).containsExactly("oai-1", "oai-1-1", "oai-1-2");
    for (int i = 0; i < 3; i++) {
      PromptRequest p = r.record(choices.ids().get(i), "acme", i);
      assertThat(p.getRequestId()).isEqualTo(choices.ids().get(i));
      assertThat(p.getPrompt()).isEqualTo("x");
      assertThat(p.getSampling().getSeed()).isEqualTo((1L << 53) - 3 + i);
      CompletionChunk chunk =
          CompletionChunk.newBuilder()
              .setRequestId(choices.ids().get(i))
              .setIndex(0)
              .setTextDelta("y")
              .build();
      assertThat(choices.of(chunk)).isEqualTo(i);
    }
    // Without a seed every choice leaves it to the job, which derives it from the choice's id.
    OpenAiRequest unseeded = parse("{\"model\": \"m\", \"prompt\": \"x\", \"n\": 2}", false);
    assertThat(unseeded.record("a-1", "", 1).getSampling().getSeed()).isNull();
    assertThat(parse("{\"model\": \"m\", \"prompt\": \"x\"}", false).choices).isEqualTo(1);
    assertThat(new Choices("oai-1", 1).ids()).containsExactly("oai-1");
    assertThat(
            choices.of(
                CompletionChunk.newBuilder()
                    .setRequestId("oai-2")
                    .setIndex(0)
                    .setTextDelta("")
                    .build()))
        .isEqualTo(-1);
  }

  @Test
  void anIdempotencyKeyGivesTheSameIdPerTenant() {
    assertThat(GatewayServer.requestId("acme", "k"))
        .isEqualTo(GatewayServer.requestId("acme", "k"));
    assertThat(GatewayServer.requestId("acme", "k"))
        .isNotEqualTo(GatewayServer.requestId("b", "k"));
    assertThat(GatewayServer.requestId("acme", null))
        .isNotEqualTo(GatewayServer.requestId("acme", null));
  }

  @Test
  void reasoningParametersMapToThePromptRecordOrAreRefused() throws Exception {
    OpenAiRequest r =
        parse(
            "{\"model\": \"m\", \"messages\": [{\"role\": \"user\", \"content\": \"Hi\"},"
                + " {\"role\": \"assistant\", \"content\": \"Hello\", \"reasoning_content\": \"Greet\"},"
                + " {\"role\": \"assistant\", \"content\": \"Bye\", \"reasoning\": \"Leave\"}],"
                + " \"chat_template_kwargs\": {\"enable_thinking\": false}}",
            true);
    PromptRequest p = r.record("id", "", 0);
    assertThat(p.getMessages())
        .extracting(m -> m.getReasoningContent())
        .containsExactly(null, "Greet", "Leave");
    assertThat(JSON.readTree(p.getChatTemplateKwargs()))
        .isEqualTo(JSON.readTree("{\"enable_thinking\": false}"));
    assertThat(r.separateReasoning).isTrue();
    String hi = "{\"model\": \"m\", \"messages\": [{\"role\": \"user\", \"content\": \"Hi\"}]";
    assertThat(parse(hi + ", \"separate_reasoning\": false}", true).separateReasoning).isFalse();
    assertThat(parse(hi + "}", true).record("id", "", 0).getChatTemplateKwargs()).isNull();
    assertThat(parse(hi + "}", true).record("id", "", 0).getThinkingTokenBudget()).isNull();
    assertThat(
            parse(hi + ", \"thinking_token_budget\": 64}", true)
                .record("id", "", 0)
                .getThinkingTokenBudget())
        .isEqualTo(64);

    String[][] refused = {
      {", \"chat_template_kwargs\": [1]}", "chat_template_kwargs"},
      {", \"chat_template_kwargs\": {\"tools\": []}}", "chat_template_kwargs"},
      {", \"separate_reasoning\": \"yes\"}", "separate_reasoning"},
      {", \"thinking_token_budget\": -1}", "thinking_token_budget"},
      {", \"thinking_token_budget\": 1.5}", "thinking_token_budget"},
    };
    for (String[] c : refused) {
      assertThatThrownBy(() -> parse(hi + c[0], true))
          .as(c[0])
          .isInstanceOfSatisfying(ApiError.class, e -> assertThat(e.param).isEqualTo(c[1]));
    }
    assertThatThrownBy(
            () ->
                parse(
                    "{\"model\": \"m\", \"prompt\": \"Hi\", \"chat_template_kwargs\": {}}", false))
        .isInstanceOfSatisfying(
            ApiError.class, e -> assertThat(e.param).isEqualTo("chat_template_kwargs"));
  }
}
