package io.flinfer.runtime.gguf;

import io.flinfer.runtime.tensor.GgmlType;
import java.util.Locale;

/**
 * Which tensor type each weight matrix of a written model gets: one type for all, or the mix
 * llama.cpp's {@code Q4_K_M} uses (Q6_K for the output matrix and for the value and down
 * projections of every other layer, Q4_K elsewhere).
 */
public final class WeightTypes {
  private final String name;
  private final GgmlType base;
  private final GgmlType important;

  private WeightTypes(String name, GgmlType base, GgmlType important) {
    this.name = name;
    this.base = base;
    this.important = important;
  }

  /** Every matrix in {@code type}. */
  public static WeightTypes uniform(GgmlType type) {
    return new WeightTypes(type.name().toLowerCase(Locale.ROOT), type, type);
  }

  /** llama.cpp's Q4_K_M mix. */
  public static WeightTypes q4KM() {
    return new WeightTypes("q4_k_m", GgmlType.Q4_K, GgmlType.Q6_K);
  }

  /** A type's name ({@code f16}, {@code q8_0}) or {@code q4_k_m}. */
  public static WeightTypes parse(String name) {
    String n = name.trim().toLowerCase(Locale.ROOT);
    if (n.equals("q4_k_m")) {
      return q4KM();
    }
    try {
      return uniform(GgmlType.valueOf(n.toUpperCase(Locale.ROOT)));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("unknown weight type " + name);
    }
  }

  /** The name used in file names: {@code f32}, {@code q8_0}, {@code q4_k_m}. */
  public String name() {
    return name;
  }

  /** The token embedding's type (it is also the output matrix when the two are tied). */
  GgmlType embedding(boolean tied) {
    return tied ? important : base;
  }

  GgmlType output() {
    return important;
  }

  /** The type of matrix {@code tensor} (e.g. {@code attn_v}) in layer {@code layer}. */
  GgmlType layer(String tensor, int layer) {
    boolean sensitive = tensor.equals("attn_v") || tensor.equals("ffn_down");
    return sensitive && layer % 2 == 0 ? important : base;
  }
}
