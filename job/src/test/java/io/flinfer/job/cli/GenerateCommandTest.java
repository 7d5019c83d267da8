package io.flinfer.job.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinfer.runtime.grammar.JsonPrefix;
import io.flinfer.runtime.testing.SharedFiles;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
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

  @Test
  void aJsonObjectResponseIsTheStartOfOneObjectAndAnUnknownFormatIsRefused() {
    String model = SharedFiles.stories260kDir().toString();
    int rc =
        FlinferCommand.commandLine()
            .execute(
                "generate",
                "--model",
                model,
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
    rc =
        FlinferCommand.commandLine()
            .execute("generate", "--model", model, "--prompt", "x", "--response-format", "yaml");
    assertThat(rc).isEqualTo(2);
    assertThat(out.toString(StandardCharsets.UTF_8)).isEmpty();
    assertThat(err.toString(StandardCharsets.UTF_8))
        .contains("response_format must be \"text\" or \"json_object\", got \"yaml\"");
  }
}
