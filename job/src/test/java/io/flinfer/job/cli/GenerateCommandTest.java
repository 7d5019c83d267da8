package io.flinfer.job.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.flinfer.runtime.gguf.GgufFile;
import io.flinfer.runtime.gguf.GgufTokenizers;
import io.flinfer.runtime.grammar.JsonPrefix;
import io.flinfer.runtime.grammar.JsonSchemaGrammar;
import io.flinfer.runtime.grammar.OutputState;
import io.flinfer.runtime.testing.SharedFiles;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** {@code flinfer generate} prints only the completion on stdout, diagnostics on stderr. */
class GenerateCommandTest {
  private final ByteArrayOutputStream out = new ByteArrayOutputStream();
  private final ByteArrayOutputStream err = new ByteArrayOutputStream();
  private PrintStream oldOut;
  private PrintStream oldErr;

  @BeforeEach
  void capture() {
    oldOut = System.out;
    oldErr = System.err;
    System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
    System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
  }

  @AfterEach
  void restore() {
    System.setOut(oldOut);
    System.setErr(oldErr);
  }

  @Test
  void greedyCompletionIsTheGoldenTextAfterThePrompt() {
    String model = SharedFiles.stories260kDir().toString();
    int rc =
        FlinferCommand.commandLine()
            .execute(
                "generate",
                "--model",
                model,
                "--prompt",
                "Once upon a time",
                "--max-new-tokens",
                "60",
                "--threads",
                "1");
    assertThat(rc).isEqualTo(0);
    String golden = SharedFiles.goldenText(64);
    assertThat(out.toString(StandardCharsets.UTF_8))
        .isEqualTo(golden.substring("Once upon a time".length()) + System.lineSeparator());
    assertThat(err.toString(StandardCharsets.UTF_8)).contains("60 tokens").contains("tokens/s");
  }

  @Test
  void badArgumentsFailWithAClearMessageAndNoOutput() {
    String model = SharedFiles.stories260kDir().toString();
    int rc =
        FlinferCommand.commandLine()
            .execute("generate", "--model", model, "--prompt", "x", "--top-p", "0");
    assertThat(rc).isEqualTo(2);
    assertThat(out.toString(StandardCharsets.UTF_8)).isEmpty();
    assertThat(err.toString(StandardCharsets.UTF_8)).contains("top_p must be in (0, 1]");
  }

  /** {@code flinfer generate --model stories260K ARGS}; its exit code. */
  private static int generate(String... args) {
    String[] all = new String[args.length + 3];
    all[0] = "generate";
    all[1] = "--model";
    all[2] = SharedFiles.stories260kDir().toString();
    System.arraycopy(args, 0, all, 3, args.length);
    return FlinferCommand.commandLine().execute(all);
  }

  @Test
  void aJsonObjectResponseIsTheStartOfOneObjectAndAnUnknownFormatIsRefused() {
    int rc =
        generate(
            "--prompt",
            "Once upon a time",
            "--response-format",
            "json_object",
            "--max-new-tokens",
            "40",
            "--threads",
            "1");
    assertThat(rc).isEqualTo(0);
    byte[] text = out.toString(StandardCharsets.UTF_8).strip().getBytes(StandardCharsets.UTF_8);
    assertThat(new JsonPrefix().accept(text, 0, text.length)).isTrue();
    assertThat(text).startsWith('{');
    out.reset();
    rc = generate("--prompt", "x", "--response-format", "yaml");
    assertThat(rc).isEqualTo(2);
    assertThat(out.toString(StandardCharsets.UTF_8)).isEmpty();
    assertThat(err.toString(StandardCharsets.UTF_8))
        .contains(
            "response_format must be \"text\", \"json_object\", \"json_schema\", \"regex\" or"
                + " \"grammar\","
                + " got \"yaml\"");
  }

  /**
   * --choice answers with one of its texts, --regex with a match, --grammar with what it derives;
   * two formats at once are a bad argument.
   */
  @Test
  void aChoiceARegexOrAGrammarHoldsTheOutput() {
    int rc =
        generate(
            "--prompt",
            "Once upon a time",
            "--choice",
            "a cat",
            "--choice",
            "a dog",
            "--threads",
            "1");
    assertThat(rc).isEqualTo(0);
    assertThat(out.toString(StandardCharsets.UTF_8).strip()).isIn("a cat", "a dog");
    out.reset();
    String regex = "[A-Z][a-z]+( [a-z]+){2,4}[.!]";
    rc = generate("--prompt", "Once upon a time", "--regex", regex, "--threads", "1");
    assertThat(rc).isEqualTo(0);
    assertThat(out.toString(StandardCharsets.UTF_8).strip()).matches(regex);
    out.reset();
    rc = generate("--prompt", "x", "--regex", "a", "--choice", "b");
    assertThat(rc).isEqualTo(2);
    assertThat(out.toString(StandardCharsets.UTF_8)).isEmpty();
    assertThat(err.toString(StandardCharsets.UTF_8))
        .contains("give at most one of --json-schema, --regex, --choice and --grammar");
    out.reset();
    // A grammar: a sentence of two to four words, the last followed by its end.
    rc =
        generate(
            "--prompt",
            "Once upon a time",
            "--grammar",
            "root ::= word (\" \" word){1,3} \".\"\nword ::= [a-z]+",
            "--threads",
            "1");
    assertThat(rc).isEqualTo(0);
    assertThat(out.toString(StandardCharsets.UTF_8).strip()).matches("[a-z]+( [a-z]+){1,3}\\.");
  }

  @Test
  void aJsonSchemaResponseFollowsTheSchemaAndABadSchemaIsRefused() throws Exception {
    String schema =
        "{\"type\": \"object\", \"properties\": {\"ok\": {\"type\": \"boolean\"},"
            + " \"n\": {\"enum\": [1, 2]}}}";
    int rc =
        generate(
            "--prompt",
            "Once upon a time",
            "--json-schema",
            schema,
            "--max-new-tokens",
            "60",
            "--threads",
            "1");
    assertThat(rc).isEqualTo(0);
    byte[] text = out.toString(StandardCharsets.UTF_8).strip().getBytes(StandardCharsets.UTF_8);
    OutputState state = JsonSchemaGrammar.compile(schema).start();
    assertThat(state.accept(text, 0, text.length))
        .as(new String(text, StandardCharsets.UTF_8))
        .isTrue();
    // The same from a file, as its own argument after the option: the same completion.
    Path file = Files.createTempFile("schema", ".json");
    Files.writeString(file, schema.replace(", ", ",\n  "));
    String whole = out.toString(StandardCharsets.UTF_8);
    out.reset();
    rc =
        generate(
            "--prompt",
            "Once upon a time",
            "--json-schema",
            "@" + file,
            "--max-new-tokens",
            "60",
            "--threads",
            "1");
    Files.delete(file);
    assertThat(rc).as(err.toString(StandardCharsets.UTF_8)).isEqualTo(0);
    assertThat(out.toString(StandardCharsets.UTF_8)).isEqualTo(whole);
    assertThat(generate("--prompt", "x", "--json-schema", "@" + file)).isEqualTo(2);
    assertThat(err.toString(StandardCharsets.UTF_8)).contains("error: no such file: " + file);
    out.reset();
    rc =
        generate(
            "--prompt",
            "x",
            "--json-schema",
            "{\"type\": \"object\", \"properties\": {\"a\": {\"type\": \"integer\", \"not\": {\"const\": 2}}}}");
    assertThat(rc).isEqualTo(2);
    assertThat(err.toString(StandardCharsets.UTF_8))
        .contains("json_schema at #/properties/a/not: keyword not is not supported");
  }

  /**
   * {@code --tools} and a conversation with a call and its result: the prompt is exactly Qwen's
   * rendering of it as {@code @huggingface/jinja} writes it, in tokens.
   */
  @Test
  void toolsAndToolTurnsRenderAsTheFamilysTemplateDoes() throws Exception {
    Path golden = Path.of("../gpu-runtime/src/test/resources/chat/tools");
    var conversation =
        new ObjectMapper().readTree(golden.resolve("conversations.json").toFile()).get(1);
    Path model = SharedFiles.root().resolve("models/zoo/qwen3-tiny.gguf");
    var tokenizer = GgufTokenizers.read(GgufFile.open(model));
    int expected =
        tokenizer.encode(Files.readString(golden.resolve("qwen3.conv2.txt")), false, true).length;
    int rc =
        FlinferCommand.commandLine()
            .execute(
                "generate",
                "--model",
                model.toString(),
                "--messages",
                conversation.get("messages").toString(),
                "--tools",
                conversation.get("tools").toString(),
                "--max-new-tokens",
                "2",
                "--threads",
                "1");
    assertThat(rc).as(err.toString(StandardCharsets.UTF_8)).isZero();
    assertThat(err.toString(StandardCharsets.UTF_8)).contains("prompt " + expected + " tokens");
    assertThat(generate("--prompt", "x", "--tools", "[]")).isEqualTo(2);
    assertThat(err.toString(StandardCharsets.UTF_8)).contains("--tools needs --chat");
  }

  /**
   * {@code --chat-template-kwargs} and assistant turns' {@code reasoning_content}: each prompt is
   * exactly Qwen3's rendering of the conversation as {@code @huggingface/jinja} writes it.
   */
  @Test
  void templateSwitchesAndReasoningRenderAsTheFamilysTemplateDoes() throws Exception {
    Path golden = Path.of("../gpu-runtime/src/test/resources/chat/thinking");
    var conversations = new ObjectMapper().readTree(golden.resolve("conversations.json").toFile());
    Path model = SharedFiles.root().resolve("models/zoo/qwen3-tiny.gguf");
    var tokenizer = GgufTokenizers.read(GgufFile.open(model));
    for (int k : new int[] {0, 3}) {
      var c = conversations.get(k);
      int expected =
          tokenizer.encode(
                  Files.readString(golden.resolve("qwen3.conv" + (k + 1) + ".txt")), false, true)
              .length;
      List<String> args =
          new ArrayList<>(
              List.of(
                  "generate",
                  "--model",
                  model.toString(),
                  "--messages",
                  c.get("messages").toString(),
                  "--max-new-tokens",
                  "1",
                  "--threads",
                  "1"));
      if (c.has("tools")) {
        args.addAll(List.of("--tools", c.get("tools").toString()));
      }
      if (!c.get("chat_template_kwargs").isNull()) {
        args.addAll(List.of("--chat-template-kwargs", c.get("chat_template_kwargs").toString()));
      }
      err.reset();
      int rc = FlinferCommand.commandLine().execute(args.toArray(String[]::new));
      assertThat(rc).as(err.toString(StandardCharsets.UTF_8)).isZero();
      assertThat(err.toString(StandardCharsets.UTF_8)).contains("prompt " + expected + " tokens");
    }
    assertThat(generate("--prompt", "x", "--chat-template-kwargs", "{}")).isEqualTo(2);
    assertThat(err.toString(StandardCharsets.UTF_8))
        .contains("--chat-template-kwargs needs --chat");
    err.reset();
    assertThat(generate("--prompt", "x", "--thinking-token-budget", "4")).isEqualTo(2);
    assertThat(err.toString(StandardCharsets.UTF_8))
        .contains("--thinking-token-budget needs --chat and N >= 0");
  }
}
