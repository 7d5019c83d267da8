package io.flinfer.job.cli;

import io.flinfer.runtime.model.ModelFormatException;
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
      PerplexityCommand.class,
      BenchModelCommand.class,
      BenchCacheCommand.class,
      BenchEngineCommand.class,
      BenchJobCommand.class,
      BenchKernelCommand.class,
      BenchFormatCommand.class,
      SchemasCommand.class,
      GatewayCommand.class,
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
      int code = commandLine().execute(args);
      if (code != 0) {
        throw new IllegalStateException("flinfer " + args[0] + " failed with exit code " + code);
      }
      return;
    }
    if (ModuleLayer.boot().findModule("jdk.incubator.vector").isEmpty()) {
      System.exit(relaunchWithVectorModule(args));
    }
    System.exit(commandLine().execute(args));
  }

  /**
   * The command line with one-line errors: a bad argument (also one found while a command checks
   * its settings, an {@link IllegalArgumentException}) prints {@code error: ...} and exits 2; a run
   * that fails prints {@code error: ...} and exits 1. Stack traces only with {@code FLINFER_DEBUG}
   * set.
   */
  public static CommandLine commandLine() {
    CommandLine cli = new CommandLine(new FlinferCommand());
    // Options read @FILE themselves (generate's --json-schema and --tools): picocli's own expansion
    // of an argument @FILE into words would split a JSON file at its spaces.
    cli.setExpandAtFiles(false);
    cli.setParameterExceptionHandler(
        (e, args) -> {
          e.getCommandLine().getErr().println("error: " + e.getMessage());
          e.getCommandLine()
              .getErr()
              .println("(" + e.getCommandLine().getCommandName() + " --help lists the options)");
          return 2;
        });
    cli.setExecutionExceptionHandler(
        (e, command, parsed) -> {
          if (System.getenv("FLINFER_DEBUG") != null) {
            e.printStackTrace(command.getErr());
          }
          command
              .getErr()
              .println(
                  "error: "
                      + (e instanceof IllegalStateException && e.getMessage() != null
                          ? e.getMessage()
                          : oneLine(e)));
          // A bad argument, or a model file that is not one, is the user's to fix: 2.
          return e instanceof IllegalArgumentException || e instanceof ModelFormatException ? 2 : 1;
        });
    return cli;
  }

  /**
   * What went wrong, on one line: the exception's message and, when it has causes (a failed Flink
   * job's root cause lies several levels down), its root cause's.
   */
  static String oneLine(Throwable e) {
    Throwable root = e;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    String top = e.getMessage();
    String m =
        root == e || root.getMessage() == null
            ? (top != null ? top : e.getClass().getSimpleName())
            : (top == null || top.equals(root.getMessage()) ? "" : top + ": ") + root.getMessage();
    return m.strip().replaceAll("\\s*\\R\\s*", " ");
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
