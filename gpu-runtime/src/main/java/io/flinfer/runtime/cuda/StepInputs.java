package io.flinfer.runtime.cuda;

import io.flinfer.runtime.forward.ForwardBatch;

/**
 * The integers one forward step needs on the device, packed for a single host-to-device copy: token
 * ids, positions, {@code out_cache_loc} and the request-table row of each token, then the index of
 * each request's last token. Owns a reusable host array.
 */
final class StepInputs {
  private int[] data = new int[0];
  private int tokens;
  private int requests;

  /** Packs {@code batch}; returns the array, valid up to {@link #length()}. */
  int[] pack(ForwardBatch batch) {
    tokens = batch.numTokens();
    requests = batch.batchSize();
    int len = 4 * tokens + requests;
    if (data.length < len) {
      data = new int[Math.max(len, data.length * 2)];
    }
    for (int t = 0; t < tokens; t++) {
      data[t] = batch.inputId(t);
      data[tokens + t] = batch.position(t);
      data[2 * tokens + t] = batch.outCacheLoc(t);
      data[3 * tokens + t] = batch.reqPoolIdx(batch.tokenRequest(t));
    }
    for (int r = 0; r < requests; r++) {
      data[4 * tokens + r] = batch.tokenOffset(r) + batch.extendLen(r) - 1;
    }
    return data;
  }

  int length() {
    return 4 * tokens + requests;
  }

  int idsOffset() {
    return 0;
  }

  int positionsOffset() {
    return tokens;
  }

  int locsOffset() {
    return 2 * tokens;
  }

  int rowsOffset() {
    return 3 * tokens;
  }

  int lastTokenOffset() {
    return 4 * tokens;
  }
}
