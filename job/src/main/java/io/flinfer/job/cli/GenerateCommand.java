package io.flinfer.job.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.flinfer.job.model.ModelLocator;
import io.flinfer.runtime.chat.ChatMessage;
import io.flinfer.runtime.chat.ChatTemplate;
import io.flinfer.runtime.chat.ReasoningParsers;
import io.flinfer.runtime.chat.ToolCall;
import io.flinfer.runtime.generate.BatchGenerator;
import io.flinfer.runtime.generate.GenerationRequest;
import io.flinfer.runtime.grammar.RegexGrammar;
import io.flinfer.runtime.grammar.ResponseFormat;
import io.flinfer.runtime.grammar.Thinking;
import io.flinfer.runtime.model.LlamaModel;
import io.flinfer.runtime.sampling.SamplingParams;
import io.flinfer.runtime.tokenizer.TextDecoder;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** Generates one completion and streams it to stdout as tokens arrive; diagnostics go to stderr. */
@Command(
    name = "generate",
    mixinStandardHelpOptions = true,
    description = "Generate a completion for one prompt, streamed to stdout.")
public final class GenerateCommand implements Callable<Integer> {
  @Mixin ModelOptions modelOptions = new ModelOptions();

  @Option(names = "--prompt", description = "The prompt text; with --chat, the user's message.")
  String prompt;

  @Option(
      names = "--chat",
      description =
          "Send the prompt as a conversation, rendered by the model's chat template with the"
              + " assistant's turn opened.")
  boolean chat;

  @Option(
      names = "--system",
      description = "With --chat: a system message before the user's (implies --chat).")
  String system;

  @Option(
      names = "--messages",
      paramLabel = "JSON",
      description =
          "The whole conversation as JSON, [{\"role\": \"user\", \"content\": \"...\"}, ...]"
              + " (implies --chat; instead of --prompt and --system).")
  String messages;

  @Option(
      names = "--token-ids",
      description =
          "Print the completion's token ids (one line, space-separated) instead of its text.")
  boolean tokenIds;

  @Option(
      names = "--max-new-tokens",
      defaultValue = "256",
      description = "Most tokens to generate (default: ${DEFAULT-VALUE}).")
  int maxNewTokens;

  @Mixin SamplingFlags sampling = new SamplingFlags();

  @Option(
      names = "--repetition-penalty",
      defaultValue = "1",
      description = "(default: ${DEFAULT-VALUE}, off)")
  float repetitionPenalty;

  @Option(names = "--seed", description = "Sampling seed (default: random, printed to stderr).")
  Long seed;

  @Option(names = "--threads", description = "Worker threads (default: all cores).")
  Integer threads;

  @Option(names = "--ignore-eos", description = "Keep generating past the end-of-sequence token.")
  boolean ignoreEos;

  @Option(
      names = "--response-format",
      defaultValue = "text",
      description =
          "text; json_object: the output is one JSON object, and ends where it closes;"
              + " json_schema: one that --json-schema describes; regex: text that --regex"
              + " matches; grammar: text that --grammar derives (default: ${DEFAULT-VALUE}).")
  String responseFormat;

  @Option(
      names = "--regex",
      description =
          "A regular expression the whole output matches (ECMA-262 syntax); implies"
              + " --response-format regex. It may end where it matches.")
  String regex;

  @Option(
      names = "--grammar",
      paramLabel = "GBNF",
      description =
          "A context-free grammar in llama.cpp's GBNF (rules name ::= ..., from root), as text or"
              + " @FILE, that derives the whole output; implies --response-format grammar.")
  String grammar;

  @Option(
      names = "--choice",
      paramLabel = "TEXT",
      description =
          "One text the output may be, repeated for each (vLLM's guided_choice); implies"
              + " --response-format regex.")
  List<String> choices;

  @Option(
      names = "--json-schema",
      description =
          "The JSON Schema of a json_schema response, as JSON or @FILE; implies"
              + " --response-format json_schema.")
  String jsonSchema;

  @Option(
      names = "--tools",
      paramLabel = "JSON",
      description =
          "With --chat: the functions the model may call, as an OpenAI tools array (JSON or"
              + " @FILE), handed to the chat template; --messages may then hold assistant turns"
              + " with tool_calls and tool turns with tool_call_id.")
  String tools;

  @Option(
      names = "--chat-template-kwargs",
      paramLabel = "JSON",
      description =
          "With --chat: a JSON object whose members the chat template reads as variables, as"
              + " vLLM's chat_template_kwargs (Qwen3: {\"enable_thinking\": false}).")
  String chatTemplateKwargs;

  @Option(
      names = "--thinking-token-budget",
      paramLabel = "N",
      description =
          "With --chat and a reasoning model: the most tokens its thought may have; then the"
              + " thought is closed (\\n</think>\\n\\n) and the answer follows, as vLLM's"
              + " thinking_token_budget.")
  Integer thinkingBudget;

  private static boolean isEnd(int token, int[] ends) {
    for (int e : ends) {
      if (e == token) {
        return true;
      }
    }
    return false;
  }

  /** The --json-schema text, read from its file when it names one with @. */
  private String schemaText() throws IOException {
    return textOrFile(jsonSchema);
  }

  /** An option's text, or the file it names with @. */
  private static String textOrFile(String value) throws IOException {
    if (value == null || !value.startsWith("@")) {
      return value;
    }
    try {
      return Files.readString(Path.of(value.substring(1)));
    } catch (java.nio.file.NoSuchFileException e) {
      throw new IllegalArgumentException("no such file: " + value.substring(1), e); // exit 2
    }
  }

  @Override
  public Integer call() throws IOException {
    PrintStream err = System.err;
    if (maxNewTokens < 1) {
      throw new IllegalArgumentException("--max-new-tokens must be at least 1");
    }
    ModelLocator.Location where = modelOptions.locate();
    LlamaModel model = where.load();
    long s = seed != null ? seed : System.nanoTime();
    SamplingParams params =
        sampling
            .params()
            .repetitionPenalty(repetitionPenalty)
            .seed(s)
            .responseFormat(format())
            .jsonSchema(schemaText())
            .regex(regexText())
            .grammar(grammar == null ? null : textOrFile(grammar))
            .thinking(thinking(model))
            .thinkingBudget(
                thinkingBudget == null ? SamplingParams.NO_THINKING_BUDGET : thinkingBudget)
            .build();
    int[] ids = promptIds(model);
    if (ids.length == 0) {
      throw new IllegalArgumentException("the prompt encodes to no tokens");
    }
    err.printf(
        "model %s (%s), prompt %d tokens, %s%n", where.model(), model.config(), ids.length, params);
    if (ids.length >= model.config().contextLength()) {
      throw new IllegalArgumentException(
          "the prompt has "
              + ids.length
              + " tokens; the context holds "
              + model.config().contextLength());
    }
    int n = threads != null ? threads : Runtime.getRuntime().availableProcessors();
    PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
    TextDecoder decoder = new TextDecoder(model.tokenizer(), ids[ids.length - 1]);
    long start = System.nanoTime();
    long[] firstToken = {0};
    try (BatchGenerator g = new BatchGenerator(model, 1, model.config().contextLength(), n)) {
      int max = Math.min(maxNewTokens, g.maxContext() - ids.length);
      int[] produced =
          g.generate(
                  List.of(new GenerationRequest(ids, params, max, !ignoreEos)),
                  (r, i, token, logprob) -> {
                    if (i == 0) {
                      firstToken[0] = System.nanoTime();
                    }
                    if (!tokenIds && (ignoreEos || !isEnd(token, model.tokenizer().endTokens()))) {
                      out.print(decoder.next(token));
                      out.flush();
                    }
                  })[0];
      if (tokenIds) {
        StringBuilder line = new StringBuilder();
        for (int t : produced) {
          line.append(line.length() == 0 ? "" : " ").append(t);
        }
        out.print(line);
      } else {
        out.print(decoder.flush());
      }
      out.println();
      out.flush();
      long end = System.nanoTime();
      double decodeSeconds = (end - firstToken[0]) / 1e9;
      err.printf(
          "%d tokens; first token after %.1f ms; %.1f tokens/s after it%n",
          produced.length,
          (firstToken[0] - start) / 1e6,
          produced.length > 1 ? (produced.length - 1) / decodeSeconds : 0.0);
    }
    return 0;
  }

  /**
   * The response format: the one named, or the one that --json-schema, --regex or --choice imply.
   */
  private ResponseFormat format() {
    int given =
        (jsonSchema != null ? 1 : 0)
            + (regex != null ? 1 : 0)
            + (choices != null ? 1 : 0)
            + (grammar != null ? 1 : 0);
    if (given > 1) {
      throw new IllegalArgumentException(
          "give at most one of --json-schema, --regex, --choice and --grammar");
    }
    return jsonSchema != null
        ? ResponseFormat.JSON_SCHEMA
        : regex != null || choices != null
            ? ResponseFormat.REGEX
            : grammar != null ? ResponseFormat.GRAMMAR : ResponseFormat.of(responseFormat);
  }

  /** The regex of --regex, or the one that matches exactly the --choice texts; else null. */
  private String regexText() {
    return choices != null ? RegexGrammar.ofChoices(choices) : regex;
  }

  /** Whether the prompt is a conversation for the model's template, rather than text. */
  private boolean conversation() {
    return chat || system != null || messages != null;
  }

  /** Whether a constrained or capped conversation may think first: as the job decides it. */
  private Thinking thinking(LlamaModel model) {
    boolean constrained = format() != ResponseFormat.TEXT;
    if (!conversation() || !(constrained || thinkingBudget != null)) {
      return Thinking.NONE;
    }
    return new ReasoningParsers(model.chatTemplate().orElse(null)).thinking(chatTemplateKwargs);
  }

  /** The prompt's tokens: the text, or the conversation as the model's template renders it. */
  private int[] promptIds(LlamaModel model) throws IOException {
    boolean conversation = conversation();
    if (tools != null && !conversation) {
      throw new IllegalArgumentException("--tools needs --chat");
    }
    if (thinkingBudget != null && (!conversation || thinkingBudget < 0)) {
      throw new IllegalArgumentException("--thinking-token-budget needs --chat and N >= 0");
    }
    if (chatTemplateKwargs != null && !conversation) {
      throw new IllegalArgumentException("--chat-template-kwargs needs --chat");
    }
    if (!conversation) {
      if (prompt == null) {
        throw new IllegalArgumentException("give --prompt (or --chat with --messages)");
      }
      return model.tokenizer().encode(prompt, model.tokenizer().addBos());
    }
    ChatTemplate template =
        model
            .chatTemplate()
            .orElseThrow(
                () ->
                    new IllegalArgumentException(
                        model.id() + " has no chat template (tokenizer.chat_template)"));
    List<ChatMessage> turns = new ArrayList<>();
    if (messages != null) {
      if (prompt != null || system != null) {
        throw new IllegalArgumentException("give --messages, or --system and --prompt, not both");
      }
      for (JsonNode m : new ObjectMapper().readTree(messages)) {
        List<ToolCall> calls = new ArrayList<>();
        for (JsonNode c : m.path("tool_calls")) {
          JsonNode f = c.path("function");
          JsonNode args = f.path("arguments");
          calls.add(
              new ToolCall(
                  c.path("id").asText(null),
                  f.path("name").asText(null),
                  args.isTextual() ? args.asText() : args.toString()));
        }
        JsonNode content = m.path("content");
        turns.add(
            new ChatMessage(
                m.path("role").asText(null),
                content.isNull() && !calls.isEmpty() ? "" : content.asText(null),
                calls,
                m.path("tool_call_id").asText(null),
                m.path("reasoning_content").asText(null)));
      }
    } else {
      if (prompt == null) {
        throw new IllegalArgumentException("--chat needs --prompt (the user's message)");
      }
      if (system != null) {
        turns.add(new ChatMessage("system", system));
      }
      turns.add(new ChatMessage("user", prompt));
    }
    // The template writes the turns' special tokens (and BOS where the family has one).
    String rendered = template.render(turns, textOrFile(tools), chatTemplateKwargs, true);
    return model.tokenizer().encode(rendered, false, true);
  }
}
