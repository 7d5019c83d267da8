package io.flinfer.job.gateway;

import io.flinfer.avro.Completion;
import io.flinfer.avro.CompletionChunk;
import io.flinfer.avro.DeadLetter;
import io.flinfer.avro.PromptRequest;
import io.flinfer.job.pipeline.PipelineSettings;
import io.flinfer.operators.format.RecordReader;
import io.flinfer.operators.format.RegistryUnavailableException;
import io.flinfer.operators.format.SchemaRegistryClient;
import io.flinfer.operators.request.Rejection;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The gateway's side of the job's topics: prompts are written to the prompts topic (acknowledged by
 * every replica before the client hears of them), and the chunks, completions and dead letters read
 * back and handed to whoever waits on their request id. Completions and dead letters of the last
 * {@code lookback} are read at start and kept (the newest {@code keep}), so that a client retrying
 * with the same idempotency key, even after a restart of the gateway, gets the answer that was
 * produced.
 */
final class TopicBroker implements AutoCloseable {
  /**
   * What a waiting request hears: a {@link CompletionChunk}, {@link Completion} or {@link
   * DeadLetter}.
   */
  private final Map<String, List<BlockingQueue<Object>>> waiting = new ConcurrentHashMap<>();

  private final Map<String, Object> answers;
  private final PipelineSettings settings;
  private final KafkaProducer<byte[], byte[]> producer;
  private final KafkaConsumer<byte[], byte[]> consumer;
  private final RecordReader<Completion> completions;
  private final RecordReader<CompletionChunk> chunks;
  private final RecordReader<DeadLetter> deadLetters;
  private final CountDownLatch caughtUp = new CountDownLatch(1);
  private final Thread reader;
  private volatile boolean closed;

  TopicBroker(PipelineSettings s, Duration lookback, int keep) {
    this.settings = s;
    this.answers =
        new LinkedHashMap<>(16, 0.75f, false) {
          @Override
          protected boolean removeEldestEntry(Map.Entry<String, Object> eldest) {
            return size() > keep;
          }
        };
    SchemaRegistryClient registry =
        s.schemaRegistryUrl() == null ? null : new SchemaRegistryClient(s.schemaRegistryUrl());
    completions = RecordReader.completions(registry);
    chunks = RecordReader.chunks(registry);
    deadLetters = RecordReader.deadLetters(registry);
    producer =
        new KafkaProducer<>(
            Map.of(
                ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, s.bootstrapServers(),
                ProducerConfig.ACKS_CONFIG, "all",
                ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true",
                ProducerConfig.LINGER_MS_CONFIG, "0"),
            new ByteArraySerializer(),
            new ByteArraySerializer());
    consumer =
        new KafkaConsumer<>(
            Map.of(
                ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, s.bootstrapServers(),
                ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed",
                ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false"),
            new ByteArrayDeserializer(),
            new ByteArrayDeserializer());
    Map<TopicPartition, Long> ends = assign(lookback);
    reader = new Thread(() -> read(ends), "gateway-topics");
    reader.setDaemon(true);
    reader.start();
  }

  /** Waits until the answers of the lookback window have been read. */
  boolean awaitCaughtUp(Duration timeout) throws InterruptedException {
    return caughtUp.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
  }

  boolean caughtUp() {
    return caughtUp.getCount() == 0;
  }

  /**
   * Starts listening for {@code requestId}'s output into {@code q}, which first gets the answer
   * already known, if any. Several requests (the choices of one HTTP request) can share a queue:
   * each event tells by its request id whose it is.
   */
  void subscribe(String requestId, BlockingQueue<Object> q) {
    waiting
        .computeIfAbsent(requestId, k -> new java.util.concurrent.CopyOnWriteArrayList<>())
        .add(q);
    Object known;
    synchronized (answers) {
      known = answers.get(requestId);
    }
    if (known != null) {
      q.add(known);
    }
  }

  void unsubscribe(String requestId, BlockingQueue<Object> q) {
    waiting.computeIfPresent(
        requestId,
        (k, list) -> {
          list.remove(q);
          return list.isEmpty() ? null : list;
        });
  }

  /** The answer already read for {@code requestId}, or null. */
  Object answer(String requestId) {
    synchronized (answers) {
      return answers.get(requestId);
    }
  }

  /** Writes {@code r} to the prompts topic and returns once the broker has it. */
  void send(PromptRequest r) throws Exception {
    ByteBuffer b = r.toByteBuffer();
    byte[] value = new byte[b.remaining()];
    b.get(value);
    producer
        .send(
            new ProducerRecord<>(
                settings.promptsTopic(), r.getRequestId().getBytes(StandardCharsets.UTF_8), value))
        .get(30, TimeUnit.SECONDS);
  }

  private Map<TopicPartition, Long> assign(Duration lookback) {
    List<TopicPartition> history = new ArrayList<>();
    List<TopicPartition> live = new ArrayList<>();
    for (String topic : List.of(settings.completionsTopic(), settings.deadLettersTopic())) {
      for (PartitionInfo p : consumer.partitionsFor(topic)) {
        history.add(new TopicPartition(topic, p.partition()));
      }
    }
    if (settings.chunksTopic() != null) {
      for (PartitionInfo p : consumer.partitionsFor(settings.chunksTopic())) {
        live.add(new TopicPartition(settings.chunksTopic(), p.partition()));
      }
    }
    List<TopicPartition> all = new ArrayList<>(history);
    all.addAll(live);
    consumer.assign(all);
    consumer.seekToEnd(live);
    live.forEach(consumer::position);
    Map<TopicPartition, Long> since = new HashMap<>();
    long from = System.currentTimeMillis() - lookback.toMillis();
    history.forEach(tp -> since.put(tp, from));
    Map<TopicPartition, OffsetAndTimestamp> at = consumer.offsetsForTimes(since);
    Map<TopicPartition, Long> ends = consumer.endOffsets(history);
    for (TopicPartition tp : history) {
      OffsetAndTimestamp o = at.get(tp);
      consumer.seek(tp, o == null ? ends.get(tp) : o.offset());
    }
    return ends;
  }

  private void read(Map<TopicPartition, Long> ends) {
    try {
      while (!closed) {
        for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(100))) {
          if (!handle(r)) {
            // The registry did not answer: read this record again in a second.
            consumer.seek(new TopicPartition(r.topic(), r.partition()), r.offset());
            Thread.sleep(1000);
            break;
          }
        }
        if (caughtUp.getCount() > 0
            && ends.entrySet().stream()
                .allMatch(e -> consumer.position(e.getKey()) >= e.getValue())) {
          caughtUp.countDown();
        }
      }
    } catch (WakeupException | InterruptedException e) {
      // closing
    } finally {
      consumer.close();
    }
  }

  /** Hands {@code r} to its waiters; false when it must be read again later. */
  private boolean handle(ConsumerRecord<byte[], byte[]> r) {
    Object event;
    String id;
    try {
      if (r.topic().equals(settings.completionsTopic())) {
        Completion c = completions.read(r.value()).record();
        event = c;
        id = c.getRequestId();
      } else if (r.topic().equals(settings.deadLettersTopic())) {
        DeadLetter d = deadLetters.read(r.value()).record();
        // A retry's duplicate record: the first one's answer is on its way.
        if (d.getRequestId() == null
            || d.getReason().equals(Rejection.DUPLICATE_REQUEST_ID.code())) {
          return true;
        }
        event = d;
        id = d.getRequestId();
      } else {
        CompletionChunk c = chunks.read(r.value()).record();
        event = c;
        id = c.getRequestId();
      }
    } catch (RegistryUnavailableException e) {
      return false;
    } catch (java.io.IOException notOurs) {
      return true; // another writer's record on our topics: not an answer to anyone here
    }
    if (!(event instanceof CompletionChunk)) {
      synchronized (answers) {
        answers.put(id, event);
      }
    }
    List<BlockingQueue<Object>> qs = waiting.get(id);
    if (qs != null) {
      qs.forEach(q -> q.add(event));
    }
    return true;
  }

  @Override
  public void close() throws InterruptedException {
    closed = true;
    consumer.wakeup();
    reader.join(5000);
    producer.close(Duration.ofSeconds(5));
  }
}
