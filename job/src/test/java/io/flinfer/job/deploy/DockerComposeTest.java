package io.flinfer.job.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import io.flinfer.job.cli.FlinferCommand;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarFile;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * What {@code docker-compose.yml} gives Flink, checked without Docker: the Flink properties load as
 * a TaskManager loads them, the GPU plugin folder that the TaskManager's entrypoint builds makes
 * Flink's GPU driver report the slot's GPU (a stand-in {@code nvidia-smi} plays the NVIDIA driver)
 * and report none without one, and the submit service's command line is one that {@code flinfer}
 * accepts.
 */
class DockerComposeTest {
  /** Flink's GPU driver factory, in the plugin jar the build copies to target/flink-gpu-plugin. */
  private static final String GPU_DRIVER_FACTORY =
      "org.apache.flink.externalresource.gpu.GPUDriverFactory";

  private static JsonNode compose;

  @TempDir Path flinkHome;

  @BeforeAll
  static void read() throws Exception {
    compose = new YAMLMapper().readTree(Path.of("..", "docker-compose.yml").toFile());
  }

  @Test
  void theTaskManagerFindsTheGpuOfItsSlotThroughFlinksGpuPlugin() throws Exception {
    layOutFlinkHome();
    Path nvidiaSmi = flinkHome.resolve("fake-driver/nvidia-smi");
    Files.createDirectories(nvidiaSmi.getParent());
    Files.writeString(nvidiaSmi, "#!/bin/sh\necho 0\n");
    nvidiaSmi.toFile().setExecutable(true);

    String path = nvidiaSmi.getParent() + ":" + System.getenv("PATH");
    assertThat(probe(path)).containsExactly("gpu index=0");
  }

  @Test
  void withoutAGpuTheTaskManagerStillStartsAndTheSlotHasNone() throws Exception {
    layOutFlinkHome();
    // No nvidia-smi: the discovery script fails, Flink logs it, the slot gets no GPU, and an
    // inference subtask with backend auto runs on the CPU.
    assertThat(probe("/usr/bin:/bin")).containsExactly("no gpu");
  }

  @Test
  void theJvmsGetTheVectorModuleAndTheJarIsInFlinksLib() {
    Map<String, String> props = flinkProperties();
    assertThat(props.get("env.java.opts.all"))
        .contains("--add-modules jdk.incubator.vector")
        .contains("-Dorg.apache.avro.SERIALIZABLE_PACKAGES=io.flinfer.avro");
    for (String service : List.of("jobmanager", "taskmanager", "submit")) {
      assertThat(compose.at("/services/" + service + "/volumes").toString())
          .as(service)
          .contains("./job/target/flinfer.jar:/opt/flink/lib/flinfer.jar:ro");
    }
  }

  @Test
  void checkpointsAreKeptInAVolumeEveryFlinkProcessAndTheClientSee() {
    Map<String, String> props = flinkProperties();
    assertThat(props)
        .containsEntry("execution.checkpointing.dir", "file:///flink-state/checkpoints")
        .containsEntry(
            "execution.checkpointing.externalized-checkpoint-retention", "RETAIN_ON_CANCELLATION")
        .containsKey("taskmanager.memory.process.size");
    assertThat(compose.at("/volumes").has("flink-state")).isTrue();
    for (String service : List.of("jobmanager", "taskmanager", "submit")) {
      assertThat(compose.at("/services/" + service + "/volumes").toString())
          .as(service)
          .contains("flink-state:/flink-state");
    }
    // The client resumes from the newest checkpoint in the folder its configuration names: it has
    // the same Flink properties as the cluster (the YAML anchor).
    assertThat(compose.at("/services/submit/environment/FLINK_PROPERTIES"))
        .isEqualTo(compose.at("/services/jobmanager/environment/FLINK_PROPERTIES"));
  }

  @Test
  void theSubmitServiceRunsTheJobCommandWithTheSlotsGpu() {
    String command = compose.at("/services/submit/command").asText().trim();
    assertThat(command)
        .contains("flink run -d -m jobmanager:8081 -c " + FlinferCommand.class.getName());
    String jobArgs = command.substring(command.indexOf("flinfer.jar ") + "flinfer.jar ".length());
    String[] args = jobArgs.replace("\"", "").trim().split("\\s+");
    CommandLine cli = FlinferCommand.commandLine();
    CommandLine.ParseResult parsed = cli.parseArgs(args);
    assertThat(parsed.subcommand().commandSpec().name()).isEqualTo("job");
    assertThat(parsed.subcommand().matchedOptionValue("--backend", "")).isEqualTo("auto");
    assertThat(parsed.subcommand().matchedOptionValue("--bootstrap-servers", ""))
        .isEqualTo("kafka:9092");
  }

  @Test
  void prometheusScrapesEveryFlinkProcessAndGrafanaShowsTheDashboard() throws Exception {
    Map<String, String> props = flinkProperties();
    String factory = props.get("metrics.reporter.prom.factory.class");
    assertThat(Class.forName(factory).getInterfaces())
        .contains(org.apache.flink.metrics.reporter.MetricReporterFactory.class);
    assertThat(props).containsEntry("metrics.reporter.prom.port", "9249");
    assertThat(compose.at("/services/taskmanager/ports").toString()).contains("9249:9249");
    JsonNode prometheus =
        new YAMLMapper().readTree(Path.of("..", "deploy/prometheus/prometheus.yml").toFile());
    assertThat(prometheus.findValues("targets").toString())
        .contains("jobmanager:9249")
        .contains("taskmanager:9249");
    assertThat(compose.at("/services/prometheus/volumes").toString())
        .contains("./deploy/prometheus/prometheus.yml:/etc/prometheus/prometheus.yml");
    // Grafana's provisioning reads dashboards from the folder the dashboard is mounted in.
    JsonNode provider =
        new YAMLMapper()
            .readTree(Path.of("..", "deploy/grafana/provisioning/dashboards/flinfer.yml").toFile());
    String folder = provider.at("/providers/0/options/path").asText();
    assertThat(compose.at("/services/grafana/volumes").toString())
        .contains("./deploy/grafana/dashboards:" + folder);
    assertThat(Path.of("..", "deploy/grafana/dashboards/flinfer.json")).isRegularFile();
  }

  private static Map<String, String> flinkProperties() {
    try {
      String text = compose.get("x-flink-properties").asText();
      @SuppressWarnings("unchecked")
      Map<String, Object> raw = new YAMLMapper().readValue(text, Map.class);
      Map<String, String> out = new java.util.TreeMap<>();
      raw.forEach((k, v) -> out.put(k, String.valueOf(v)));
      return out;
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  /**
   * FLINK_HOME as the TaskManager's container has it: {@code conf/config.yaml} with the compose
   * file's Flink properties, and {@code plugins/external-resource-gpu/} filled from the GPU plugin
   * (its jar and the discovery scripts it ships), as the entrypoint copies them from {@code opt/}.
   */
  private void layOutFlinkHome() throws Exception {
    String entrypoint = compose.at("/services/taskmanager/entrypoint").toString();
    assertThat(entrypoint)
        .contains("cp opt/external-resource-gpu/* plugins/external-resource-gpu/");
    Path plugin = flinkHome.resolve("plugins/external-resource-gpu");
    Files.createDirectories(plugin);
    Path jar;
    try (var jars = Files.list(Path.of("target", "flink-gpu-plugin"))) {
      jar = jars.filter(f -> f.toString().endsWith(".jar")).findFirst().orElseThrow();
    }
    Files.copy(jar, plugin.resolve(jar.getFileName()));
    try (JarFile j = new JarFile(jar.toFile())) {
      for (String script : List.of("nvidia-gpu-discovery.sh", "gpu-discovery-common.sh")) {
        try (InputStream in = j.getInputStream(j.getEntry(script))) {
          Files.copy(in, plugin.resolve(script));
        }
        plugin.resolve(script).toFile().setExecutable(true);
      }
    }
    Map<String, String> props = flinkProperties();
    assertThat(props)
        .containsEntry("external-resources", "gpu")
        .containsEntry("external-resource.gpu.amount", "1")
        .containsEntry("external-resource.gpu.driver-factory.class", GPU_DRIVER_FACTORY);
    assertThat(flinkHome.resolve(props.get("external-resource.gpu.param.discovery-script.path")))
        .as("the discovery script the configuration names, in the plugin folder")
        .isExecutable();
    Path conf = Files.createDirectories(flinkHome.resolve("conf"));
    Files.writeString(conf.resolve("config.yaml"), compose.get("x-flink-properties").asText());
  }

  /** The probe's lines, run with FLINK_HOME, FLINK_PLUGINS_DIR and PATH as in the container. */
  private List<String> probe(String path) throws Exception {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    ProcessBuilder pb =
        new ProcessBuilder(
            java,
            "-cp",
            System.getProperty("java.class.path"),
            GpuSlotProbe.class.getName(),
            flinkHome.resolve("conf").toString());
    pb.environment().put("FLINK_HOME", flinkHome.toString());
    pb.environment().put("FLINK_PLUGINS_DIR", flinkHome.resolve("plugins").toString());
    pb.environment().put("PATH", path);
    pb.redirectErrorStream(false);
    pb.redirectError(ProcessBuilder.Redirect.DISCARD);
    Process p = pb.start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(p.exitValue()).as(out).isZero();
    List<String> lines = new ArrayList<>(Arrays.asList(out.strip().split("\n")));
    lines.removeIf(l -> !l.startsWith("gpu") && !l.startsWith("no gpu"));
    return lines;
  }
}
