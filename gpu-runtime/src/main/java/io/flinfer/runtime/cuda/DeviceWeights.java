package io.flinfer.runtime.cuda;

import static jcuda.driver.JCudaDriver.cuMemcpyHtoD;

import io.flinfer.runtime.model.LlamaWeights;
import io.flinfer.runtime.model.ModelConfig;
import io.flinfer.runtime.tensor.WeightMatrix;
import java.nio.ByteOrder;
import java.nio.ShortBuffer;
import java.util.stream.IntStream;
import jcuda.Pointer;
import jcuda.Sizeof;
import jcuda.driver.CUdeviceptr;

/**
 * A model's weights on the device: each layer's q, k and v projections stacked into one matrix (one
 * product instead of three), gate and up stacked likewise, every matrix in {@link DeviceDtype} with
 * rows padded to a multiple of 64 columns; norms and biases in fp32. Matrices stream from the
 * mapped file through a pinned staging buffer, a slice of rows at a time, converted by the host's
 * cores: no whole tensor is ever copied to the heap.
 */
final class DeviceWeights {
  /** Bytes of the staging buffer: the most converted at once. */
  private static final int STAGING_BYTES = 32 << 20;

  final CUdeviceptr embedding;
  final CUdeviceptr classifier;
  final CUdeviceptr finalNorm;
  final CUdeviceptr[] attnNorm;
  final CUdeviceptr[] ffnNorm;
  final CUdeviceptr[] qkv;
  final CUdeviceptr[] qkvBias;
  final CUdeviceptr[] qNorm;
  final CUdeviceptr[] kNorm;
  final CUdeviceptr[] wo;
  final CUdeviceptr[] gateUp;
  final CUdeviceptr[] down;
  final long bytes;

  private final CudaContext cu;
  private final DeviceDtype dtype;
  private final Pointer staging;
  private final ShortBuffer stagingShorts;
  private long uploaded;

  DeviceWeights(CudaContext cu, DeviceDtype dtype, ModelConfig c, LlamaWeights w) {
    this.cu = cu;
    this.dtype = dtype;
    this.staging = cu.allocHost(STAGING_BYTES);
    this.stagingShorts =
        staging.getByteBuffer(0, STAGING_BYTES).order(ByteOrder.nativeOrder()).asShortBuffer();
    int layers = c.layers();
    attnNorm = new CUdeviceptr[layers];
    ffnNorm = new CUdeviceptr[layers];
    qkv = new CUdeviceptr[layers];
    qkvBias = new CUdeviceptr[layers];
    qNorm = new CUdeviceptr[layers];
    kNorm = new CUdeviceptr[layers];
    wo = new CUdeviceptr[layers];
    gateUp = new CUdeviceptr[layers];
    down = new CUdeviceptr[layers];
    try {
      embedding = matrix(w.tokenEmbedding());
      classifier = w.tiedEmbeddings() ? embedding : matrix(w.classifier());
      finalNorm = vector(w.rmsFinal());
      for (int l = 0; l < layers; l++) {
        attnNorm[l] = vector(w.rmsAtt()[l]);
        ffnNorm[l] = vector(w.rmsFfn()[l]);
        qkv[l] = matrix(w.wq()[l], w.wk()[l], w.wv()[l]);
        qkvBias[l] = c.qkvBias() ? vector(w.bq()[l], w.bk()[l], w.bv()[l]) : null;
        qNorm[l] = c.qkNorm() ? vector(w.qNorm()[l]) : null;
        kNorm[l] = c.qkNorm() ? vector(w.kNorm()[l]) : null;
        wo[l] = matrix(w.wo()[l]);
        gateUp[l] = matrix(w.w1()[l], w.w3()[l]);
        down[l] = matrix(w.w2()[l]);
      }
    } finally {
      cu.freeHost(staging);
    }
    bytes = uploaded;
  }

  /** The matrices' rows stacked, in the device type, each row padded to a multiple of 64. */
  private CUdeviceptr matrix(WeightMatrix... parts) {
    int cols = parts[0].cols();
    int kp = GemmShape.padded(cols);
    long rows = 0;
    for (WeightMatrix m : parts) {
      if (m.cols() != cols) {
        throw new IllegalArgumentException("stacked matrices differ in width");
      }
      rows += m.rows();
    }
    long rowBytes = (long) kp * Sizeof.SHORT;
    CUdeviceptr dev = cu.alloc(rows * rowBytes);
    int chunkRows = (int) Math.max(1, STAGING_BYTES / rowBytes);
    long at = 0;
    for (WeightMatrix m : parts) {
      for (int r0 = 0; r0 < m.rows(); r0 += chunkRows) {
        int n = Math.min(chunkRows, m.rows() - r0);
        convert(m, r0, n, kp);
        cuMemcpyHtoD(dev.withByteOffset(at * rowBytes), staging, n * rowBytes);
        at += n;
      }
    }
    uploaded += rows * rowBytes;
    return dev;
  }

  /** Rows [r0, r0 + n) of {@code m} into the staging buffer, zero-padded to {@code kp}. */
  private void convert(WeightMatrix m, int r0, int n, int kp) {
    int cols = m.cols();
    IntStream.range(0, n)
        .parallel()
        .forEach(
            i -> {
              float[] row = ROW.get();
              if (row.length < cols) {
                row = new float[cols];
                ROW.set(row);
              }
              m.decodeRow(r0 + i, row, 0);
              int base = i * kp;
              for (int j = 0; j < cols; j++) {
                stagingShorts.put(base + j, dtype.encode(row[j]));
              }
              for (int j = cols; j < kp; j++) {
                stagingShorts.put(base + j, (short) 0);
              }
            });
  }

  private static final ThreadLocal<float[]> ROW = ThreadLocal.withInitial(() -> new float[0]);

  private CUdeviceptr vector(float[]... parts) {
    int n = 0;
    for (float[] p : parts) {
      n += p.length;
    }
    float[] all = new float[n];
    int at = 0;
    for (float[] p : parts) {
      System.arraycopy(p, 0, all, at, p.length);
      at += p.length;
    }
    CUdeviceptr dev = cu.alloc((long) n * Sizeof.FLOAT);
    cuMemcpyHtoD(dev, Pointer.to(all), (long) n * Sizeof.FLOAT);
    uploaded += (long) n * Sizeof.FLOAT;
    return dev;
  }
}
