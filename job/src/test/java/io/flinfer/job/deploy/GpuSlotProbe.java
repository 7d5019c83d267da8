package io.flinfer.job.deploy;

import org.apache.flink.api.common.externalresource.ExternalResourceInfo;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.GlobalConfiguration;
import org.apache.flink.core.plugin.PluginManager;
import org.apache.flink.core.plugin.PluginUtils;
import org.apache.flink.runtime.externalresource.ExternalResourceInfoProvider;
import org.apache.flink.runtime.externalresource.ExternalResourceUtils;

/**
 * What a TaskManager does with its configuration directory and plugins folder to learn the external
 * resources of its slots: load {@code config.yaml}, load the plugins, and ask each configured
 * driver (here Flink's GPU driver, which runs its discovery script). Prints one line per GPU found,
 * {@code gpu index=N}, or {@code no gpu}. Run in a JVM of its own, with {@code FLINK_HOME} and
 * {@code FLINK_PLUGINS_DIR} set as in the container.
 */
public final class GpuSlotProbe {
  private GpuSlotProbe() {}

  public static void main(String[] args) {
    Configuration conf = GlobalConfiguration.loadConfiguration(args[0]);
    PluginManager plugins = PluginUtils.createPluginManagerFromRootFolder(conf);
    ExternalResourceInfoProvider provider =
        ExternalResourceUtils.createStaticExternalResourceInfoProviderFromConfig(conf, plugins);
    var gpus = provider.getExternalResourceInfos("gpu");
    if (gpus.isEmpty()) {
      System.out.println("no gpu");
    }
    for (ExternalResourceInfo gpu : gpus) {
      System.out.println("gpu index=" + gpu.getProperty("index").orElse("?"));
    }
  }
}
