package io.flinfer.runtime.cuda;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.flinfer.memcache.KvStoreType;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The build compiled the kernels into a fat binary and packaged it where the runner loads it. */
class KernelImageTest {
  @Test
  void everyKernelTheRunnerLaunchesIsInThePackagedImage() throws Exception {
    try (InputStream in = CudaContext.class.getResourceAsStream(CudaContext.FATBIN)) {
      assumeTrue(in != null || !nvccOnPath(), "nvcc is not installed, so the build skipped it");
      assertThat(in).as("kernel image " + CudaContext.FATBIN).isNotNull();
      byte[] image = in.readAllBytes();
      // A CUDA fat binary starts with its magic number 0xBA55ED50, little-endian.
      assertThat(image).startsWith(0x50, 0xED, 0x55, 0xBA);
      String text = new String(image, StandardCharsets.ISO_8859_1);
      for (DeviceDtype t : DeviceDtype.values()) {
        String s = t.suffix();
        for (String k :
            new String[] {
              "embed_", "rmsnorm_", "qkv_post_", "swiglu_", "geglu_", "attention_combine_"
            }) {
          assertThat(text).contains(k + s);
        }
        for (String v : new String[] {"s8", "s16", "s32", "s64", "l"}) {
          assertThat(text).contains("gemm_" + v + "_" + s);
        }
        for (KvStoreType kv : List.of(t.kvType(), KvStoreType.FP8_E4M3, KvStoreType.FP8_E5M2)) {
          assertThat(text).contains("qkv_post_" + t.cacheType(kv));
          String a = t.attentionType(kv);
          for (int hd : new int[] {8, 16, 32, 64, 96, 128, 256}) {
            assertThat(AttentionKernels.supportsHeadDim(hd)).isTrue();
            assertThat(text).contains(AttentionKernels.name(a, hd, StepPlan.FEW_ROWS));
            assertThat(text).contains(AttentionKernels.name(a, hd, AttentionKernels.manyRows(hd)));
          }
        }
      }
      assertThat(text)
          .contains(
              "update_req_to_token",
              "gemm_reduce",
              "greedy_summary",
              "post_norm_add",
              "sample_rows");
    }
  }

  /** Sizes the host launches with or relies on are the ones the kernels were written for. */
  @Test
  void theHostsLimitsAreTheKernels() throws Exception {
    String source = Files.readString(Path.of("src/main/cuda/flinfer_kernels.cu"));
    // The norms and q/k/v post add at most MAX_SPLITS partial sums: a shape with more would lose
    // some.
    assertThat(define(source, "MAX_SPLITS")).isEqualTo(GemmShape.MAX_SPLITS);
    assertThat(define(source, "QKV_WARPS")).isEqualTo(CudaModelRunner.QKV_WARPS);
    assertThat(define(source, "SPLIT")).isEqualTo(StepPlan.SPLIT);
    // The step's header and its draw entries are read where the host wrote them.
    assertThat(define(source, "H_SAMPLES")).isEqualTo(StepPlan.H_SAMPLES);
    assertThat(define(source, "H_SAMPLES_OFF")).isEqualTo(StepPlan.H_SAMPLES_OFF);
    assertThat(define(source, "SAMPLE_INTS")).isEqualTo(StepPlan.SAMPLE_INTS);
  }

  private static int define(String source, String name) {
    Matcher m = Pattern.compile("(?m)^#define " + name + " (\\d+)").matcher(source);
    assertThat(m.find()).as("#define " + name).isTrue();
    return Integer.parseInt(m.group(1));
  }

  private static boolean nvccOnPath() {
    for (String dir : System.getenv().getOrDefault("PATH", "").split(java.io.File.pathSeparator)) {
      if (Files.isExecutable(Path.of(dir, "nvcc"))) {
        return true;
      }
    }
    return false;
  }
}
