package io.flinfer.operators.flink;

import io.flinfer.runtime.model.LlamaModel;
import io.flinfer.runtime.model.ModelLoader;
import java.io.Serializable;
import java.nio.file.Path;

/** Where each task loads the model from (the files must be readable on every TaskManager). */
public record ModelSource(String model, String tokenizer) implements Serializable {
  public LlamaModel load() {
    return ModelLoader.load(Path.of(model), tokenizer == null ? null : Path.of(tokenizer));
  }
}
