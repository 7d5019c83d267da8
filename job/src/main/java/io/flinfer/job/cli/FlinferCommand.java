package io.flinfer.job.cli;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The {@code flinfer} command line: one subcommand per thing a user runs. */
@Command(
    name = "flinfer",
    mixinStandardHelpOptions = true,
    version = "flinfer 0.1.0",
    description = "LLM inference as a Flink streaming job, with SGLang-style KV memory management.",
    subcommands = {
      RunCommand.class,
      JobCommand.class,
      ReplayCommand.class,
      GenerateCommand.class,
      BenchModelCommand.class,
      BenchCacheCommand.class,
      BenchEngineCommand.class,
      BenchJobCommand.class,
      CommandLine.HelpCommand.class
    })
public final class FlinferCommand implements Runnable {

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Override
  public void run() {
    spec.commandLine().usage(System.err);
  }

  public static void main(String[] args) throws Exception {
    if (buildsFlinkJob(args)) {
      // Under `flink run` this main runs inside Flink's client, which must submit the job graph
      // itself: no relaunch, no exit (the kernels run on the TaskManagers, not here).
      int code = new CommandLine(new FlinferCommand()).execute(args);
      if (code != 0) {
        throw new IllegalStateException("flinfer " + args[0] + " failed with exit code " + code);
      }
      return;
    }
    if (ModuleLayer.boot().findModule("jdk.incubator.vector").isEmpty()) {
      System.exit(relaunchWithVectorModule(args));
    }
    System.exit(new CommandLine(new FlinferCommand()).execute(args));
  }

  /**
   * Whether the command builds a Flink job for whatever environment runs it ({@code job}, {@code
   * replay}): under {@code flink run} that is Flink's client, which must not be relaunched.
   */
  static boolean buildsFlinkJob(String[] args) {
    return args.length > 0 && ("job".equals(args[0]) || "replay".equals(args[0]));
  }

  /** The kernels need the Vector API module; a plain {@code java -jar} start lacks it. */
  private static int relaunchWithVectorModule(String[] args) throws Exception {
    String java = ProcessHandle.current().info().command().orElse("java");
    List<String> cmd = new ArrayList<>();
    cmd.add(java);
    cmd.add("--add-modules");
    cmd.add("jdk.incubator.vector");
    cmd.addAll(ManagementFactory.getRuntimeMXBean().getInputArguments());
    cmd.add("-cp");
    cmd.add(System.getProperty("java.class.path"));
    cmd.add(FlinferCommand.class.getName());
    cmd.addAll(Arrays.asList(args));
    return new ProcessBuilder(cmd).inheritIO().start().waitFor();
  }
}
