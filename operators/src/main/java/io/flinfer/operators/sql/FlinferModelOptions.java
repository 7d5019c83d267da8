package io.flinfer.operators.sql;

import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;

/** The options of {@code CREATE MODEL ... WITH ('provider' = 'flinfer', ...)}. */
public final class FlinferModelOptions {
  private FlinferModelOptions() {}

  public static final ConfigOption<String> MODEL_PATH =
      ConfigOptions.key("model-path")
          .stringType()
          .noDefaultValue()
          .withDescription("A GGUF file or llama2.c checkpoint, on every TaskManager.");

  public static final ConfigOption<String> TOKENIZER_PATH =
      ConfigOptions.key("tokenizer-path")
          .stringType()
          .noDefaultValue()
          .withDescription("The tokenizer of a llama2.c checkpoint (a GGUF carries its own).");

  public static final ConfigOption<String> BACKEND =
      ConfigOptions.key("backend").stringType().defaultValue("cpu").withDescription("cpu or cuda.");

  public static final ConfigOption<Integer> MAX_RUNNING_REQUESTS =
      ConfigOptions.key("max-running-requests").intType().defaultValue(32);

  public static final ConfigOption<Integer> MAX_TOTAL_TOKENS =
      ConfigOptions.key("max-total-tokens")
          .intType()
          .defaultValue(0)
          .withDescription("KV pool tokens; 0 sizes it from the memory left.");

  public static final ConfigOption<Integer> THREADS =
      ConfigOptions.key("threads").intType().defaultValue(1);

  public static final ConfigOption<Integer> SPECULATIVE_NUM_DRAFT_TOKENS =
      ConfigOptions.key("speculative-num-draft-tokens")
          .intType()
          .defaultValue(0)
          .withDescription(
              "Speculative decoding by n-gram lookup: draft tokens per step (1 to 16), verified in"
                  + " the step, the answers unchanged; 0: off.");

  public static final ConfigOption<Integer> MAX_TOKENS =
      ConfigOptions.key("max-tokens").intType().defaultValue(128);

  public static final ConfigOption<Double> TEMPERATURE =
      ConfigOptions.key("temperature").doubleType().defaultValue(1.0);

  public static final ConfigOption<Double> TOP_P =
      ConfigOptions.key("top-p").doubleType().defaultValue(1.0);

  public static final ConfigOption<Long> SEED =
      ConfigOptions.key("seed")
          .longType()
          .noDefaultValue()
          .withDescription("Every row's seed; without it a row's seed derives from its prompt.");

  public static final ConfigOption<String> RESPONSE_FORMAT =
      ConfigOptions.key("response-format")
          .stringType()
          .defaultValue("text")
          .withDescription(
              "text; json_object: every answer is one JSON object; json_schema: one that"
                  + " json-schema describes; regex: text that regex matches as a whole; grammar:"
                  + " text that grammar derives.");

  public static final ConfigOption<String> JSON_SCHEMA =
      ConfigOptions.key("json-schema")
          .stringType()
          .noDefaultValue()
          .withDescription("The JSON Schema of response-format json_schema, as JSON.");

  public static final ConfigOption<String> REGEX =
      ConfigOptions.key("regex")
          .stringType()
          .noDefaultValue()
          .withDescription(
              "The regular expression of response-format regex (ECMA-262 syntax, as a JSON"
                  + " Schema's pattern), matched by every answer as a whole.");

  public static final ConfigOption<String> GRAMMAR =
      ConfigOptions.key("grammar")
          .stringType()
          .noDefaultValue()
          .withDescription(
              "The grammar of response-format grammar: GBNF (llama.cpp's), rules from root, that"
                  + " derives every answer.");

  public static final ConfigOption<String> CHAT_TEMPLATE_KWARGS =
      ConfigOptions.key("chat-template-kwargs")
          .stringType()
          .noDefaultValue()
          .withDescription(
              "With messages: a JSON object whose members the chat template reads as variables"
                  + " (Qwen3: {\"enable_thinking\": false}).");

  public static final ConfigOption<Integer> THINKING_TOKEN_BUDGET =
      ConfigOptions.key("thinking-token-budget")
          .intType()
          .noDefaultValue()
          .withDescription(
              "With messages to a reasoning model: the most tokens its thought may have; then"
                  + " the thought is closed and the answer follows.");

  public static final ConfigOption<String> TOOLS =
      ConfigOptions.key("tools")
          .stringType()
          .noDefaultValue()
          .withDescription(
              "With messages: the functions the model may call, as an OpenAI tools array (JSON),"
                  + " handed to the chat template; the calls an answer makes come in the output"
                  + " column tool_calls.");
}
