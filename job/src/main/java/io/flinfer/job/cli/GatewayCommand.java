package io.flinfer.job.cli;

import io.flinfer.job.gateway.GatewayServer;
import io.flinfer.job.model.ModelLocator;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** The OpenAI-compatible HTTP gateway in front of a running job's topics. */
@Command(
    name = "gateway",
    mixinStandardHelpOptions = true,
    description =
        "Serve the OpenAI API (/v1/completions, /v1/chat/completions, /v1/models) in front of a"
            + " running job: each request a record on the prompts topic, answered from its"
            + " output topics.")
public final class GatewayCommand implements Callable<Integer> {
  @Mixin ModelOptions modelOptions = new ModelOptions();

  @Mixin JobOptions jobOptions = new JobOptions();

  @Mixin GatewayOptions gateway = new GatewayOptions();

  @Option(names = "--bootstrap-servers", required = true, description = "Kafka bootstrap servers.")
  String bootstrapServers;

  @Option(names = "--host", defaultValue = "0.0.0.0", description = "Address to listen on.")
  String host;

  @Option(
      names = "--port",
      defaultValue = "8000",
      description = "Port (default: ${DEFAULT-VALUE}).")
  int port;

  @Override
  public Integer call() throws Exception {
    ModelLocator.Location where = modelOptions.locate();
    try (GatewayServer server =
        GatewayServer.start(
            gateway.settings(jobOptions.settings(bootstrapServers, where), host, port))) {
      System.out.printf("OpenAI API at http://%s:%d/v1%n", host, server.port());
      new CountDownLatch(1).await(); // until the process is stopped
    }
    return 0;
  }
}
