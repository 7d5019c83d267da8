package io.flinfer.operators.engine;

/**
 * Why a request ended.
 *
 * @param detail the matched stop string or token, or the error message
 */
public record FinishReason(Type type, String detail) {

  /** The kinds of ending. */
  public enum Type {
    /** Reached its token limit (max new tokens, the context, or the KV pool). */
    LENGTH,
    /** Produced EOS, a stop token or a stop string. */
    STOP,
    /** Aborted by its caller. */
    ABORT,
    /** Could not be served, with the reason in {@code detail}. */
    ERROR
  }

  public static FinishReason length(String detail) {
    return new FinishReason(Type.LENGTH, detail);
  }

  public static FinishReason stop(String detail) {
    return new FinishReason(Type.STOP, detail);
  }

  public static FinishReason abort() {
    return abort("aborted");
  }

  public static FinishReason abort(String detail) {
    return new FinishReason(Type.ABORT, detail);
  }

  public static FinishReason error(String detail) {
    return new FinishReason(Type.ERROR, detail);
  }

  @Override
  public String toString() {
    return type.name().toLowerCase() + (detail == null ? "" : "(" + detail + ")");
  }
}
