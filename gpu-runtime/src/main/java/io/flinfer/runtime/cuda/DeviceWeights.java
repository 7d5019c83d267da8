package io.flinfer.runtime.cuda;

import static jcuda.driver.JCudaDriver.cuMemcpyHtoD;

import io.flinfer.runtime.model.LlamaWeights;
import io.flinfer.runtime.model.ModelConfig;
import io.flinfer.runtime.tensor.WeightMatrix;
import java.nio.ByteOrder;
import java.nio.ShortBuffer;
import java.util.function.IntUnaryOperator;
import java.util.stream.IntStream;
import jcuda.Pointer;
import jcuda.Sizeof;
import jcuda.driver.CUdeviceptr;

/**
 * A model's weights on the device: each layer's q, k and v projections stacked into one matrix (one
 * product instead of three), gate and up stacked likewise (or interleaved by eights, for a product
 * that applies SwiGLU itself: {@link Fusions#interleavedGateUpRow}), every matrix in {@link
 * DeviceDtype} with rows padded to a multiple of 64 columns; norms and biases in fp32. Matrices
 * stream from the mapped file through a pinned staging buffer, a slice of rows at a time, converted
 * by the host's cores: no whole tensor is ever copied to the heap.
 */
final class DeviceWeights {
  /** Bytes of the staging buffer: the most converted at once. */
  private static final int STAGING_BYTES = 32 << 20;

  final CUdeviceptr embedding;
  final CUdeviceptr classifier;
  final CUdeviceptr finalNorm;
  final CUdeviceptr[] attnNorm;
  final CUdeviceptr[] ffnNorm;
  final CUdeviceptr[] postAttNorm;
  final CUdeviceptr[] postFfnNorm;
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

  DeviceWeights(
      CudaContext cu, DeviceDtype dtype, ModelConfig c, LlamaWeights w, boolean gateUpInterleaved) {
    this.cu = cu;
    this.dtype = dtype;
    this.staging = cu.allocHost(STAGING_BYTES);
    this.stagingShorts =
        staging.getByteBuffer(0, STAGING_BYTES).order(ByteOrder.nativeOrder()).asShortBuffer();
    int layers = c.layers();
    attnNorm = new CUdeviceptr[layers];
    ffnNorm = new CUdeviceptr[layers];
    postAttNorm = new CUdeviceptr[layers];
    postFfnNorm = new CUdeviceptr[layers];
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
        postAttNorm[l] = c.postNorms() ? vector(w.postAttNorm()[l]) : null;
        postFfnNorm[l] = c.postNorms() ? vector(w.postFfnNorm()[l]) : null;
        qkv[l] = matrix(w.wq()[l], w.wk()[l], w.wv()[l]);
        qkvBias[l] = c.qkvBias() ? vector(w.bq()[l], w.bk()[l], w.bv()[l]) : null;
        qNorm[l] = c.qkNorm() ? vector(w.qNorm()[l]) : null;
        kNorm[l] = c.qkNorm() ? vector(w.kNorm()[l]) : null;
        wo[l] = matrix(w.wo()[l]);
        gateUp[l] =
            gateUpInterleaved
                ? matrix(d -> Fusions.interleavedGateUpRow(d, c.hiddenDim()), w.w1()[l], w.w3()[l])
                : matrix(w.w1()[l], w.w3()[l]);
        down[l] = matrix(w.w2()[l]);
      }
    } finally {
      cu.freeHost(staging);
    }
    bytes = uploaded;
  }

  /** The matrices' rows stacked, in the device type, each row padded to a multiple of 64. */
  private CUdeviceptr matrix(WeightMatrix... parts) {
    return matrix(d -> d, parts);
  }

  /** As {@link #matrix(WeightMatrix...)}, device row d holding stacked row {@code order(d)}. */
  private CUdeviceptr matrix(IntUnaryOperator order, WeightMatrix... parts) {
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
    for (int d0 = 0; d0 < rows; d0 += chunkRows) {
      int n = (int) Math.min(chunkRows, rows - d0);
      convert(parts, order, d0, n, kp);
      cuMemcpyHtoD(dev.withByteOffset(d0 * rowBytes), staging, n * rowBytes);
    }
    uploaded += rows * rowBytes;
    return dev;
  }

  /**
   * Device rows [d0, d0 + n) into the staging buffer, zero-padded to {@code kp}: stacked row {@code
   * order(d)} of the parts for device row d.
   */
  private void convert(WeightMatrix[] parts, IntUnaryOperator order, int d0, int n, int kp) {
    int cols = parts[0].cols();
    IntStream.range(0, n)
        .parallel()
        .forEach(
            i -> {
              float[] row = ROW.get();
              if (row.length < cols) {
                row = new float[cols];
                ROW.set(row);
              }
              int r = order.applyAsInt(d0 + i);
              int p = 0;
              while (r >= parts[p].rows()) {
                r -= parts[p].rows();
                p++;
              }
              parts[p].decodeRow(r, row, 0);
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
