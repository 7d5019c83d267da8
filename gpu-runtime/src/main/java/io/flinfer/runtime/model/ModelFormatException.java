package io.flinfer.runtime.model;

/** A model or tokenizer file that cannot be read: names the file and what is wrong. */
public final class ModelFormatException extends RuntimeException {
  public ModelFormatException(String file, String problem) {
    super(file + ": " + problem);
  }

  public ModelFormatException(String file, String problem, Throwable cause) {
    super(file + ": " + problem, cause);
  }
}
