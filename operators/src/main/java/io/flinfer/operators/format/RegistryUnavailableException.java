package io.flinfer.operators.format;

import java.io.IOException;

/**
 * The schema registry could not answer (unreachable, timed out, or a 5xx): nothing is known about
 * the record, so it is not a bad record. The job fails and, restarted, reads it again.
 */
public final class RegistryUnavailableException extends IOException {
  public RegistryUnavailableException(String message, Throwable cause) {
    super(message, cause);
  }
}
