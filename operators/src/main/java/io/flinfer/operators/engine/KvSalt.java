package io.flinfer.operators.engine;

import io.flinfer.memcache.KvStoreType;
import io.flinfer.runtime.model.LlamaModel;
import io.flinfer.runtime.model.ModelConfig;
import java.util.zip.CRC32C;

/**
 * What stored KV is only valid for: the model (its id, shape and a checksum of some of its weights,
 * so two files of one shape with other weights never share pages), the KV store type, the page size
 * and how the products round their activations. The storage tier names its pages under this salt.
 */
final class KvSalt {
  private KvSalt() {}

  static String of(LlamaModel model, KvStoreType type, int pageSize) {
    ModelConfig c = model.config();
    CRC32C crc = new CRC32C();
    float[] row = new float[c.dim()];
    for (int r : new int[] {0, c.vocabSize() / 2, c.vocabSize() - 1}) {
      model.weights().tokenEmbedding().decodeRow(r, row, 0);
      add(crc, row);
    }
    model.weights().wq()[0].decodeRow(0, row, 0);
    add(crc, row);
    add(crc, model.weights().rmsFinal());
    add(crc, model.weights().rmsAtt()[c.layers() - 1]);
    // Products that round their activations (ggml's 8-bit blocks, fp16, bf16) write other KV than
    // unrounded ones (-Dflinfer.activations=f32): pages from one are not the other's.
    return model.id()
        + "|"
        + c
        + "|"
        + type
        + "|page="
        + pageSize
        + "|w="
        + crc.getValue()
        + "|act="
        + model.weights().wq()[0].activationRounding();
  }

  private static void add(CRC32C crc, float[] values) {
    for (float v : values) {
      int b = Float.floatToRawIntBits(v);
      crc.update(b);
      crc.update(b >>> 8);
      crc.update(b >>> 16);
      crc.update(b >>> 24);
    }
  }
}
