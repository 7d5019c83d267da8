package io.flinfer.runtime.cuda;

import io.flinfer.memcache.HalfFloats;
import io.flinfer.memcache.KvStoreType;
import io.flinfer.runtime.model.LlamaWeights;
import io.flinfer.runtime.tensor.GgmlType;
import io.flinfer.runtime.tensor.WeightMatrix;

/**
 * The 16-bit type the device keeps a model's weights, matrix inputs and KV cache in: bf16 when the
 * file holds bf16 weights, else fp16 (F32, F16 and quantized files lose less in fp16's mantissa).
 * The system property {@code flinfer.cuda.dtype} ({@code bf16} or {@code f16}) overrides.
 */
enum DeviceDtype {
  BF16("bf16", KvStoreType.BF16),
  F16("f16", KvStoreType.FP16);

  private final String suffix;
  private final KvStoreType kvType;

  DeviceDtype(String suffix, KvStoreType kvType) {
    this.suffix = suffix;
    this.kvType = kvType;
  }

  /** The suffix of the kernels for this type ({@code gemm_l_bf16}). */
  String suffix() {
    return suffix;
  }

  KvStoreType kvType() {
    return kvType;
  }

  /**
   * The suffix of the kernels that write a KV cache of type {@code kv} ({@code qkv_post_e4m3}):
   * this type's own, or the FP8 format's.
   */
  String cacheType(KvStoreType kv) {
    switch (kv) {
      case FP8_E4M3:
        return "e4m3";
      case FP8_E5M2:
        return "e5m2";
      default:
        if (kv != kvType) {
          throw new IllegalArgumentException("no " + suffix + " kernels for a KV cache in " + kv);
        }
        return suffix;
    }
  }

  /**
   * The type part of the attention kernels' names for a KV cache of type {@code kv}: this type's
   * suffix, or the FP8 format's then this type's ({@code e4m3_bf16}).
   */
  String attentionType(KvStoreType kv) {
    return kv.isFp8() ? cacheType(kv) + "_" + suffix : cacheType(kv);
  }

  short encode(float v) {
    return this == BF16 ? HalfFloats.toBf16(v) : HalfFloats.toHalf(v);
  }

  static DeviceDtype forModel(LlamaWeights w) {
    String forced = System.getProperty("flinfer.cuda.dtype");
    if (forced != null) {
      for (DeviceDtype d : values()) {
        if (d.suffix.equals(forced)) {
          return d;
        }
      }
      throw new IllegalArgumentException("flinfer.cuda.dtype must be bf16 or f16, not " + forced);
    }
    boolean bf16 = w.tokenEmbedding().type() == GgmlType.BF16;
    for (WeightMatrix[] ms : new WeightMatrix[][] {w.wq(), w.wo(), w.w1(), w.w2()}) {
      for (WeightMatrix m : ms) {
        bf16 |= m.type() == GgmlType.BF16;
      }
    }
    return bf16 ? BF16 : F16;
  }
}
