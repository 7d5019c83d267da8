package io.flinfer.operators.flink;

import org.apache.flink.metrics.Histogram;
import org.apache.flink.metrics.HistogramStatistics;
import org.apache.flink.runtime.metrics.DescriptiveStatisticsHistogram;

/**
 * A latency histogram fed microseconds and read in seconds (quantiles, mean and standard deviation
 * as fractions of a second), as the {@code _seconds} metrics of vLLM and SGLang are: Flink
 * histograms take longs. Min, max and the values, which Flink reads as longs, stay in microseconds
 * (Prometheus shows only the quantiles and the count).
 */
final class SecondsHistogram implements Histogram {
  private final DescriptiveStatisticsHistogram micros;

  SecondsHistogram(int window) {
    this.micros = new DescriptiveStatisticsHistogram(window);
  }

  /** Records {@code value} microseconds. */
  @Override
  public void update(long value) {
    micros.update(value);
  }

  @Override
  public long getCount() {
    return micros.getCount();
  }

  @Override
  public HistogramStatistics getStatistics() {
    HistogramStatistics s = micros.getStatistics();
    return new HistogramStatistics() {
      @Override
      public double getQuantile(double quantile) {
        return s.getQuantile(quantile) / 1e6;
      }

      @Override
      public long[] getValues() {
        return s.getValues();
      }

      @Override
      public int size() {
        return s.size();
      }

      @Override
      public double getMean() {
        return s.getMean() / 1e6;
      }

      @Override
      public double getStdDev() {
        return s.getStdDev() / 1e6;
      }

      @Override
      public long getMax() {
        return s.getMax();
      }

      @Override
      public long getMin() {
        return s.getMin();
      }
    };
  }
}
