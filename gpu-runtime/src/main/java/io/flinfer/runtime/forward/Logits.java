package io.flinfer.runtime.forward;

import java.util.Arrays;

/**
 * What a forward step hands back for each request of its batch: the full row of logits over the
 * vocabulary, or, for a request that asked only for its greedy choice ({@link
 * ForwardBatch#greedyOnly}), the top token with its logit and the log of the partition function, so
 * a device backend need not copy the whole row. Owns arrays that grow with the batch and are
 * reused.
 */
public final class Logits {
  private final int vocab;
  private float[] rows = new float[0];
  private int[] argmax = new int[0];
  private float[] maxLogit = new float[0];
  private float[] logZ = new float[0];
  private boolean[] full = new boolean[0];
  private boolean[] drawn = new boolean[0];
  private int[] drawnToken = new int[0];
  private float[] drawnLogprob = new float[0];
  private int batch;

  public Logits(int vocab) {
    this.vocab = vocab;
  }

  public int vocab() {
    return vocab;
  }

  /** Makes room for {@code batch} requests; every request starts without a result. */
  public void reset(int batch) {
    this.batch = batch;
    if (full.length < batch) {
      int n = Math.max(batch, 2 * full.length);
      argmax = new int[n];
      maxLogit = new float[n];
      logZ = new float[n];
      full = new boolean[n];
      drawn = new boolean[n];
      drawnToken = new int[n];
      drawnLogprob = new float[n];
    }
    if ((long) batch * vocab > rows.length) {
      rows = new float[Math.max(batch, 8) * vocab];
    }
    Arrays.fill(full, 0, batch, false);
    Arrays.fill(drawn, 0, batch, false);
  }

  public int batch() {
    return batch;
  }

  /** The rows, request r's at {@code [r * vocab, (r + 1) * vocab)}; valid where {@link #isFull}. */
  public float[] rows() {
    return rows;
  }

  /** Marks request r's row as written. */
  public void markFull(int r) {
    full[r] = true;
  }

  public boolean isFull(int r) {
    return full[r];
  }

  /** Request r's greedy summary: the top token (lowest id on ties), its logit and log Z. */
  public void setGreedy(int r, int token, float max, float logPartition) {
    argmax[r] = token;
    maxLogit[r] = max;
    logZ[r] = logPartition;
  }

  public int argmax(int r) {
    return argmax[r];
  }

  public float maxLogit(int r) {
    return maxLogit[r];
  }

  public float logZ(int r) {
    return logZ[r];
  }

  /**
   * Request r's token as the backend drew it ({@link ForwardBatch#drawOnBackend}), with its
   * log-probability before temperature and truncation.
   */
  public void setDrawn(int r, int token, float logprob) {
    drawn[r] = true;
    drawnToken[r] = token;
    drawnLogprob[r] = logprob;
  }

  public boolean isDrawn(int r) {
    return drawn[r];
  }

  public int drawnToken(int r) {
    return drawnToken[r];
  }

  public float drawnLogprob(int r) {
    return drawnLogprob[r];
  }

  /** A copy of request r's full row. */
  public float[] row(int r) {
    if (!full[r]) {
      throw new IllegalStateException("request " + r + " has no full row of logits");
    }
    return Arrays.copyOfRange(rows, r * vocab, (r + 1) * vocab);
  }
}
