package io.flinfer.operators.format;

/** A JSON record that does not fit its schema, with a message naming the field. */
public final class JsonRecordException extends Exception {
  public JsonRecordException(String message) {
    super(message);
  }
}
