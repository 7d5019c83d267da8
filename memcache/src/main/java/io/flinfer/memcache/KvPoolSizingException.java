package io.flinfer.memcache;

/** The KV pool cannot be sized or allocated as asked; the message carries the numbers. */
public final class KvPoolSizingException extends RuntimeException {
  public KvPoolSizingException(String message) {
    super(message);
  }

  public KvPoolSizingException(String message, Throwable cause) {
    super(message, cause);
  }
}
