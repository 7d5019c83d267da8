package io.flinfer.job.cli;

import org.apache.flink.streaming.api.environment.LocalStreamEnvironment;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

/**
 * The check that {@code job} and {@code replay} make before running: started by {@code flink run}
 * they only build the job graph, but started directly they run the job in this JVM, whose kernels
 * need the Vector API module (which they cannot add by restarting: under {@code flink run} a
 * restart would lose the client's context).
 */
final class InProcessRun {
  private InProcessRun() {}

  static void requireKernels(StreamExecutionEnvironment env) {
    if (env instanceof LocalStreamEnvironment
        && ModuleLayer.boot().findModule("jdk.incubator.vector").isEmpty()) {
      throw new IllegalStateException(
          "this runs the job in this JVM (no Flink client started it), and the kernels need the"
              + " Vector API module: run it with ./flinfer, or java --add-modules"
              + " jdk.incubator.vector -jar flinfer.jar ...; on a cluster, flink run ...");
    }
  }
}
