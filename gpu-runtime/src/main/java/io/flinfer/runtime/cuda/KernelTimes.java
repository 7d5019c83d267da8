package io.flinfer.runtime.cuda;

import static jcuda.driver.JCudaDriver.cuEventCreate;
import static jcuda.driver.JCudaDriver.cuEventDestroy;
import static jcuda.driver.JCudaDriver.cuEventElapsedTime;
import static jcuda.driver.JCudaDriver.cuEventRecord;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import jcuda.driver.CUevent;
import jcuda.driver.CUstream;

/**
 * Device time per kernel role, for finding where a step's time goes on a machine without a
 * profiler: a pair of events around each launch, read after the step's synchronisation and summed
 * by role. Opt-in ({@code flinfer.cuda.profile=true}); the runner then launches directly instead of
 * replaying graphs, so the figures show kernel time, not the gaps between launches.
 */
final class KernelTimes {
  private final CUstream stream;
  private final List<CUevent> events = new ArrayList<>();
  private final List<String> labels = new ArrayList<>();
  private final Map<String, double[]> totals = new LinkedHashMap<>();
  private int used;
  private int steps;

  KernelTimes(CUstream stream) {
    this.stream = stream;
  }

  static boolean enabled() {
    return Boolean.getBoolean("flinfer.cuda.profile");
  }

  void before(String label) {
    if (labels.size() <= used / 2) {
      labels.add(label);
    } else {
      labels.set(used / 2, label);
    }
    cuEventRecord(event(used++), stream);
  }

  void after() {
    cuEventRecord(event(used++), stream);
  }

  /** After the stream has synchronised: adds the step's launches to their roles. */
  void collect() {
    float[] ms = new float[1];
    for (int i = 0; i + 1 < used; i += 2) {
      cuEventElapsedTime(ms, events.get(i), events.get(i + 1));
      double[] t = totals.computeIfAbsent(labels.get(i / 2), k -> new double[2]);
      t[0] += ms[0];
      t[1]++;
    }
    if (used > 0) {
      steps++;
    }
    used = 0;
  }

  /** One line per role: total milliseconds, share, launches, mean microseconds per launch. */
  String report() {
    double all = totals.values().stream().mapToDouble(t -> t[0]).sum();
    StringBuilder s =
        new StringBuilder(
            String.format(
                "kernel times over %d steps: %.2f ms of kernels, %.1f us a step%n",
                steps, all, steps == 0 ? 0 : 1000 * all / steps));
    totals.entrySet().stream()
        .sorted((a, b) -> Double.compare(b.getValue()[0], a.getValue()[0]))
        .forEach(
            e ->
                s.append(
                    String.format(
                        "  %-28s %10.2f ms %5.1f%% %8d launches %9.1f us each%n",
                        e.getKey(),
                        e.getValue()[0],
                        100 * e.getValue()[0] / Math.max(all, 1e-9),
                        (long) e.getValue()[1],
                        1000 * e.getValue()[0] / e.getValue()[1])));
    return s.toString();
  }

  void close() {
    for (CUevent e : events) {
      cuEventDestroy(e);
    }
    events.clear();
  }

  private CUevent event(int i) {
    while (events.size() <= i) {
      CUevent e = new CUevent();
      cuEventCreate(e, 0);
      events.add(e);
    }
    return events.get(i);
  }
}
