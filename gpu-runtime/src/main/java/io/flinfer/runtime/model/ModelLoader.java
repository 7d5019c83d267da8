package io.flinfer.runtime.model;

import io.flinfer.runtime.chat.ChatTemplate;
import io.flinfer.runtime.gguf.GgufFile;
import io.flinfer.runtime.gguf.GgufModelLoader;
import io.flinfer.runtime.llama2c.Llama2cCheckpointLoader;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/** Loads a model file of either format, telling GGUF from llama2.c by its magic. */
public final class ModelLoader {
  private ModelLoader() {}

  /**
   * @param tokenizer the llama2.c tokenizer file; ignored for GGUF, which carries its own
   */
  public static LlamaModel load(Path model, Path tokenizer) {
    if (!Files.isRegularFile(model)) {
      throw new ModelFormatException(model.toString(), "no such file");
    }
    if (isGguf(model) || model.getFileName().toString().endsWith(".gguf")) {
      return GgufModelLoader.load(model);
    }
    if (tokenizer == null || !Files.isRegularFile(tokenizer)) {
      throw new ModelFormatException(
          model.toString(),
          tokenizer == null
              ? "a llama2.c checkpoint needs its tokenizer.bin, and none lies beside it"
                  + " (--tokenizer PATH)"
              : "a llama2.c checkpoint needs its tokenizer.bin; " + tokenizer + " is no file");
    }
    return Llama2cCheckpointLoader.load(model, tokenizer);
  }

  /**
   * The model's chat template, read from the file's metadata alone (no weights are loaded); empty
   * for a file without one and for llama2.c checkpoints, which have none.
   */
  public static Optional<ChatTemplate> chatTemplate(Path model) {
    if (!Files.isRegularFile(model)) {
      throw new ModelFormatException(model.toString(), "no such file");
    }
    return isGguf(model) || model.getFileName().toString().endsWith(".gguf")
        ? GgufModelLoader.chatTemplate(GgufFile.open(model))
        : Optional.empty();
  }

  public static boolean isGguf(Path file) {
    try (InputStream in = Files.newInputStream(file)) {
      byte[] m = in.readNBytes(4);
      return m.length == 4 && m[0] == 'G' && m[1] == 'G' && m[2] == 'U' && m[3] == 'F';
    } catch (IOException e) {
      return false;
    }
  }
}
