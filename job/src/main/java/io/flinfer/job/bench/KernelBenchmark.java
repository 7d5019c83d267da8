package io.flinfer.job.bench;

import io.flinfer.runtime.gguf.GgufWriter;
import io.flinfer.runtime.kernel.WorkerPool;
import io.flinfer.runtime.tensor.GgmlType;
import io.flinfer.runtime.tensor.WeightMatrix;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Random;

/**
 * One weight matrix of random values times a batch of random tokens, over and over, the rows split
 * between worker threads as the forward pass splits them: what a kernel computes per second, apart
 * from everything else in a step. The weights are written in the type's file encoding into a direct
 * buffer (as a mapped model file is read) and loaded as the model loader loads them.
 */
public final class KernelBenchmark implements AutoCloseable {
  /** A measured run: products per second, and a checksum of the outputs' bits. */
  public record Measurement(int tokens, double callsPerSecond, long outputBits) {}

  private final WeightMatrix matrix;
  private final WorkerPool pool;
  private final float[][] scratch;

  public KernelBenchmark(GgmlType type, int rows, int cols, int threads, long seed) {
    Random rnd = new Random(seed);
    float[] w = new float[Math.multiplyExact(rows, cols)];
    for (int i = 0; i < w.length; i++) {
      w[i] = (float) rnd.nextGaussian() * 0.02f;
    }
    byte[] encoded = GgufWriter.encode(type, w);
    ByteBuffer data = ByteBuffer.allocateDirect(encoded.length).order(ByteOrder.LITTLE_ENDIAN);
    data.put(encoded).flip();
    this.matrix = WeightMatrix.of(type, data, rows, cols);
    this.pool = new WorkerPool(threads);
    this.scratch = new float[threads][WeightMatrix.scratchSize(cols)];
  }

  public WeightMatrix matrix() {
    return matrix;
  }

  /** Runs products of {@code tokens} tokens for at least {@code seconds}. */
  public Measurement run(int tokens, double seconds, long seed) {
    int rows = matrix.rows();
    int cols = matrix.cols();
    Random rnd = new Random(seed);
    float[] x = new float[tokens * cols];
    for (int i = 0; i < x.length; i++) {
      x[i] = (float) rnd.nextGaussian();
    }
    float[] out = new float[tokens * rows];
    // Each thread one contiguous range, cut at multiples of four rows (the tiles' height).
    WorkerPool.Task task =
        (part, parts) -> {
          int from = (int) ((long) rows * part / parts) & ~3;
          int to = part == parts - 1 ? rows : (int) ((long) rows * (part + 1) / parts) & ~3;
          matrix.matmul(x, tokens, out, rows, from, to, scratch[part]);
        };
    long limit = (long) (seconds * 1e9);
    long start = System.nanoTime();
    long calls = 0;
    long elapsed;
    do {
      pool.run(task);
      calls++;
      elapsed = System.nanoTime() - start;
    } while (elapsed < limit);
    long bits = 0;
    for (float v : out) {
      bits = 31 * bits + Float.floatToRawIntBits(v);
    }
    return new Measurement(tokens, calls / (elapsed / 1e9), bits);
  }

  @Override
  public void close() {
    pool.close();
  }
}
