package io.flinfer.job.cli;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** Which models bench-model runs: a file named with --model alone, unless --models says more. */
class BenchModelCommandTest {
  @Test
  void withoutEitherOptionTheTestModelAndThe110mShapeRun() {
    assertThat(parsed().modelsToRun()).containsExactly("test", "llama-110m");
  }

  @Test
  void aFileNamedWithModelIsTheOnlyOneRun() {
    assertThat(parsed("--model", "/models/any.gguf").modelsToRun()).containsExactly("test");
  }

  @Test
  void modelsWhenGivenChooseWhatModelNames() {
    assertThat(parsed("--model", "/models/any.gguf", "--models", "test,llama-1b").modelsToRun())
        .containsExactly("test", "llama-1b");
    assertThat(parsed("--models", "qwen2.5-0.5b").modelsToRun()).containsExactly("qwen2.5-0.5b");
  }

  private static BenchModelCommand parsed(String... args) {
    BenchModelCommand command = new BenchModelCommand();
    new CommandLine(command).parseArgs(args);
    return command;
  }
}
