package io.flinfer.job.gateway;

import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

/** An error answered as OpenAI's API answers it: an HTTP status and {@code {"error": {...}}}. */
final class ApiError extends Exception {
  final int status;
  final String type;
  final String param;
  final String code;

  ApiError(int status, String type, String param, String code, String message) {
    super(message);
    this.status = status;
    this.type = type;
    this.param = param;
    this.code = code;
  }

  /** A 400 about one request parameter. */
  static ApiError badParameter(String param, String message) {
    return new ApiError(
        400,
        "invalid_request_error",
        param,
        "invalid_value",
        "Invalid value for '" + param + "': " + message);
  }

  /** A 404: {@code asked} is not the served model. */
  static ApiError modelNotFound(String asked, String served) {
    return new ApiError(
        404,
        "invalid_request_error",
        "model",
        "model_not_found",
        "The model '" + asked + "' does not exist; this server serves '" + served + "'.");
  }

  static ApiError unsupported(String param) {
    return new ApiError(
        400,
        "invalid_request_error",
        param,
        "unsupported_parameter",
        "Unsupported parameter: '" + param + "' is not supported by this server.");
  }

  ObjectNode body() {
    ObjectNode error = JsonNodeFactory.instance.objectNode();
    error.put("message", getMessage());
    error.put("type", type);
    error.put("param", param);
    error.put("code", code);
    ObjectNode body = JsonNodeFactory.instance.objectNode();
    body.set("error", error);
    return body;
  }
}
