package io.flinfer.job.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The {@code flinfer} command line: one subcommand per thing a user runs. */
@Command(
    name = "flinfer",
    mixinStandardHelpOptions = true,
    version = "flinfer 0.1.0",
    description = "LLM inference as a Flink streaming job, with SGLang-style KV memory management.",
    subcommands = {GenerateCommand.class, BenchModelCommand.class, CommandLine.HelpCommand.class})
public final class FlinferCommand implements Runnable {

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Override
  public void run() {
    spec.commandLine().usage(System.err);
  }

  public static void main(String[] args) {
    System.exit(new CommandLine(new FlinferCommand()).execute(args));
  }
}
