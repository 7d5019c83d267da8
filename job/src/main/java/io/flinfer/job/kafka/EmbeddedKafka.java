package io.flinfer.job.kafka;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import kafka.server.KafkaConfig;
import kafka.server.KafkaRaftServer;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.metadata.storage.Formatter;
import org.apache.kafka.server.common.MetadataVersion;

/**
 * A real Kafka broker (KRaft, one combined broker and controller) in this process, on 127.0.0.1,
 * with the single-node settings that transactions and consumer groups need. Owns the server and its
 * data folder. Used by the embedded run and by integration tests.
 */
public final class EmbeddedKafka implements AutoCloseable {
  private final KafkaRaftServer server;
  private final String bootstrap;

  private EmbeddedKafka(KafkaRaftServer server, String bootstrap) {
    this.server = server;
    this.bootstrap = bootstrap;
  }

  /** Formats {@code dataDir}, starts the broker on free ports and waits until it answers. */
  public static EmbeddedKafka start(Path dataDir) throws Exception {
    return start(dataDir, 0);
  }

  /**
   * Starts the broker on {@code port} (its controller on the next port; 0: free ports) over the log
   * in {@code dataDir}, formatting it only the first time: a broker started again on the same
   * folder and port has every topic, record and transaction of the last one, and its clients find
   * it where they left it.
   *
   * @throws IllegalArgumentException when the port or the next one is taken
   */
  public static EmbeddedKafka start(Path dataDir, int port) throws Exception {
    Files.createDirectories(dataDir);
    if (port > 0) {
      requireFree(port, "--kafka-port");
      requireFree(port + 1, "--kafka-port (its controller takes the next port)");
    }
    int[] free = port > 0 ? new int[] {port, port + 1} : twoFreePorts();
    int brokerPort = free[0];
    int controllerPort = free[1];
    String dir = dataDir.toAbsolutePath().toString();
    Properties p = new Properties();
    p.put("process.roles", "broker,controller");
    p.put("node.id", "1");
    p.put("controller.quorum.voters", "1@127.0.0.1:" + controllerPort);
    p.put(
        "listeners",
        "PLAINTEXT://127.0.0.1:" + brokerPort + ",CONTROLLER://127.0.0.1:" + controllerPort);
    p.put("advertised.listeners", "PLAINTEXT://127.0.0.1:" + brokerPort);
    p.put("controller.listener.names", "CONTROLLER");
    p.put("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT");
    p.put("inter.broker.listener.name", "PLAINTEXT");
    p.put("log.dirs", dir);
    p.put("offsets.topic.replication.factor", "1");
    p.put("offsets.topic.num.partitions", "1");
    p.put("transaction.state.log.replication.factor", "1");
    p.put("transaction.state.log.min.isr", "1");
    p.put("transaction.state.log.num.partitions", "1");
    p.put("group.initial.rebalance.delay.ms", "0");
    p.put("auto.create.topics.enable", "false");
    if (!Files.exists(dataDir.resolve("meta.properties"))) {
      format(dir);
    }
    KafkaRaftServer server = new KafkaRaftServer(new KafkaConfig(p, false), Time.SYSTEM);
    server.startup();
    EmbeddedKafka kafka = new EmbeddedKafka(server, "127.0.0.1:" + brokerPort);
    kafka.awaitReady(Duration.ofSeconds(60));
    return kafka;
  }

  /** Formats a new log folder: a cluster of its own, this broker its one node. */
  private static void format(String dir) throws Exception {
    new Formatter()
        .setPrintStream(new PrintStream(OutputStream.nullOutputStream()))
        .setNodeId(1)
        .setClusterId(Uuid.randomUuid().toString())
        .addDirectory(dir)
        .setMetadataLogDirectory(dir)
        .setControllerListenerName("CONTROLLER")
        .setReleaseVersion(MetadataVersion.LATEST_PRODUCTION)
        .setIgnoreFormatted(true)
        .run();
  }

  /** Fails with a message naming {@code option} when {@code port} is taken on 127.0.0.1. */
  public static void requireFree(int port, String option) {
    try (ServerSocket s = new ServerSocket()) {
      s.setReuseAddress(true);
      s.bind(new java.net.InetSocketAddress("127.0.0.1", port));
    } catch (IOException e) {
      throw new IllegalArgumentException(
          "port " + port + " is in use (another flinfer run?); choose another with " + option);
    }
  }

  /**
   * Two free ports, told apart: both sockets are open at once, so the system cannot hand out the
   * same port twice (one after the other, it sometimes did, and the broker refused two listeners on
   * one port).
   */
  private static int[] twoFreePorts() throws IOException {
    try (ServerSocket a = new ServerSocket(0);
        ServerSocket b = new ServerSocket(0)) {
      return new int[] {a.getLocalPort(), b.getLocalPort()};
    }
  }

  private void awaitReady(Duration timeout) throws Exception {
    long end = System.nanoTime() + timeout.toNanos();
    Exception last = null;
    while (System.nanoTime() < end) {
      try (Admin admin = admin()) {
        if (!admin.describeCluster().nodes().get(5, TimeUnit.SECONDS).isEmpty()) {
          return;
        }
      } catch (Exception e) {
        last = e;
      }
      Thread.sleep(100);
    }
    throw new IllegalStateException(
        "the embedded Kafka broker did not become ready in " + timeout, last);
  }

  public String bootstrapServers() {
    return bootstrap;
  }

  public Admin admin() {
    return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap));
  }

  /** Creates topics that do not exist yet, each with {@code partitions} partitions. */
  public void createTopics(int partitions, String... names) throws Exception {
    try (Admin admin = admin()) {
      var existing = admin.listTopics().names().get(30, TimeUnit.SECONDS);
      List<NewTopic> topics = new ArrayList<>();
      for (String n : names) {
        if (!existing.contains(n)) {
          topics.add(new NewTopic(n, partitions, (short) 1));
        }
      }
      admin.createTopics(topics).all().get(30, TimeUnit.SECONDS);
    }
  }

  @Override
  public void close() {
    server.shutdown();
    server.awaitShutdown();
  }
}
