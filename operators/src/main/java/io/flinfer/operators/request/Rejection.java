package io.flinfer.operators.request;

import java.util.Locale;

/**
 * Why a record gets a dead letter instead of an answer: the dead letter's {@code reason}, a code a
 * consumer can branch on, beside its human-readable {@code error}.
 */
public enum Rejection {
  /** The bytes are not a {@code PromptRequest}. */
  UNDECODABLE,
  /** A field is over its {@link RequestLimits limit}. */
  LIMIT_EXCEEDED,
  /** The request cannot be served as given (empty prompt, bad sampling option, ...). */
  INVALID_REQUEST,
  /** Its request id was already taken within the dedupe window. */
  DUPLICATE_REQUEST_ID,
  /** Its completion would exceed the largest record the job may send. */
  OUTPUT_TOO_LARGE;

  /** The code on the dead letter: the name in lower case. */
  public String code() {
    return name().toLowerCase(Locale.ROOT);
  }
}
