package io.flinfer.runtime.gguf;

import io.flinfer.runtime.model.RopeConfig;

/** The GGUF architectures Flinfer serves, and what each implies that its tensors do not say. */
enum ModelFamily {
  LLAMA("llama", RopeConfig.Style.NORMAL),
  QWEN2("qwen2", RopeConfig.Style.NEOX),
  QWEN3("qwen3", RopeConfig.Style.NEOX),
  PHI3("phi3", RopeConfig.Style.NEOX),
  GEMMA("gemma", RopeConfig.Style.NEOX),
  GEMMA2("gemma2", RopeConfig.Style.NEOX),
  GRANITE("granite", RopeConfig.Style.NORMAL),
  EXAONE("exaone", RopeConfig.Style.NEOX),
  GEMMA3("gemma3", RopeConfig.Style.NEOX);

  private final String ggufName;
  private final RopeConfig.Style ropeStyle;

  ModelFamily(String ggufName, RopeConfig.Style ropeStyle) {
    this.ggufName = ggufName;
    this.ropeStyle = ropeStyle;
  }

  String ggufName() {
    return ggufName;
  }

  /** llama.cpp decides the rope style by architecture, not by metadata. */
  RopeConfig.Style ropeStyle() {
    return ropeStyle;
  }

  /** Gemma's layout: the embedding scaled by sqrt(dim), GeGLU. */
  boolean gemma() {
    return this == GEMMA || this == GEMMA2 || this == GEMMA3;
  }

  /** Norms of the attention's and the feed-forward's outputs before the residual (Gemma 2, 3). */
  boolean postNorms() {
    return this == GEMMA2 || this == GEMMA3;
  }

  /** The family named {@code general.architecture}, or null. */
  static ModelFamily of(String architecture) {
    for (ModelFamily f : values()) {
      if (f.ggufName.equals(architecture)) {
        return f;
      }
    }
    return null;
  }

  static String supported() {
    StringBuilder b = new StringBuilder();
    for (ModelFamily f : values()) {
      b.append(b.length() == 0 ? "" : ", ").append(f.ggufName);
    }
    return b.toString();
  }
}
