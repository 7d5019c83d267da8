package io.flinfer.job.gateway;

import io.flinfer.avro.Completion;
import io.flinfer.avro.CompletionChunk;
import io.flinfer.avro.DeadLetter;
import java.util.ArrayList;
import java.util.List;

/**
 * The request ids of one HTTP request's choices ({@code n}): choice 0 has the request's own id (so
 * a request without {@code n} keeps the id it always had), choice i that id with {@code -i}
 * appended. Each choice is a prompt record of its own, batched with everything else and sharing the
 * prompt's prefix through the radix cache; the same idempotency key gives the same ids, hence the
 * same answers.
 */
final class Choices {
  private final List<String> ids;

  Choices(String requestId, int n) {
    List<String> all = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      all.add(i == 0 ? requestId : requestId + "-" + i);
    }
    this.ids = List.copyOf(all);
  }

  List<String> ids() {
    return ids;
  }

  int size() {
    return ids.size();
  }

  /** The choice an event (a chunk, a completion or a dead letter) belongs to, or -1. */
  int of(Object event) {
    String id;
    if (event instanceof CompletionChunk c) {
      id = c.getRequestId();
    } else if (event instanceof Completion c) {
      id = c.getRequestId();
    } else {
      id = ((DeadLetter) event).getRequestId();
    }
    return ids.indexOf(id);
  }
}
