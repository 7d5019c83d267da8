package io.flinfer.avro;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.InputStream;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import org.apache.avro.AvroRuntimeException;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.message.BinaryMessageDecoder;
import org.apache.avro.message.BinaryMessageEncoder;
import org.junit.jupiter.api.Test;

/**
 * Records on topics use Avro single-object encoding (a marker and the schema's fingerprint in every
 * message), and schemas evolve: readers of either version read the other's records.
 */
class RecordEncodingTest {

  static Schema v1() throws Exception {
    try (InputStream in =
        RecordEncodingTest.class.getResourceAsStream(
            "/io/flinfer/avro/history/PromptRequest-1.avsc")) {
      return new Schema.Parser().parse(in);
    }
  }

  @Test
  void everyRecordRoundTripsWithItsFingerprintInTheMessage() throws Exception {
    PromptRequest req =
        PromptRequest.newBuilder()
            .setRequestId("r1")
            .setPrompt("Once upon a time")
            .setSampling(SamplingOptions.newBuilder().setTemperature(0f).setSeed(7L).build())
            .setMetadata(Map.of("user", "u42"))
            .build();
    ByteBuffer bytes = req.toByteBuffer();
    assertThat(bytes.get(0)).isEqualTo((byte) 0xC3);
    assertThat(bytes.get(1)).isEqualTo((byte) 0x01);
    assertThat(bytes.getLong(2)).isNotZero();
    assertThat(PromptRequest.fromByteBuffer(bytes)).isEqualTo(req);

    Completion c =
        Completion.newBuilder()
            .setRequestId("r1")
            .setText(", there was")
            .setFinishReason("length")
            .setUsage(new Usage(5, 0, 3, 0))
            .setTimings(new Timings(1L, 20L, 90L, 15L))
            .setProvenance(Provenance.newBuilder().setModelId("stories260K").build())
            .build();
    assertThat(Completion.fromByteBuffer(c.toByteBuffer())).isEqualTo(c);
    CompletionChunk chunk =
        CompletionChunk.newBuilder()
            .setRequestId("r1")
            .setIndex(0)
            .setTextDelta(",")
            .setTokenIds(List.of(432))
            .setLogprobs(List.of(-0.1f))
            .build();
    assertThat(CompletionChunk.fromByteBuffer(chunk.toByteBuffer())).isEqualTo(chunk);
    DeadLetter dl =
        DeadLetter.newBuilder()
            .setRaw(ByteBuffer.wrap(new byte[] {1, 2}))
            .setStage("decode")
            .setError("bad header")
            .build();
    assertThat(DeadLetter.fromByteBuffer(dl.toByteBuffer())).isEqualTo(dl);
  }

  @Test
  void aProducerSendsOnlyWhatItNeedsAndGetsDefaults() {
    PromptRequest req = PromptRequest.newBuilder().setRequestId("r2").setPrompt("Hi").build();
    assertThat(req.getTenant()).isEmpty();
    assertThat(req.getMaxNewTokens()).isEqualTo(128);
    assertThat(req.getSampling().getTemperature()).isEqualTo(1f);
    assertThat(req.getSampling().getSeed()).isNull();
    assertThat(req.getStop()).isEmpty();
    assertThat(req.getMetadata()).isEmpty();
  }

  @Test
  void theCurrentReaderReadsVersionOneRecordsWithAddedFieldsDefaulted() throws Exception {
    Schema v1 = v1();
    GenericRecord old = new GenericData.Record(v1);
    old.put("request_id", "old-1");
    old.put("tenant", "acme");
    old.put("prompt", "Once upon a time");
    old.put("prompt_token_ids", null);
    GenericRecord sampling = new GenericData.Record(v1.getField("sampling").schema());
    sampling.put("temperature", 0.5f);
    sampling.put("top_p", 0.9f);
    sampling.put("top_k", 40);
    sampling.put("repetition_penalty", 1f);
    sampling.put("frequency_penalty", 0f);
    sampling.put("presence_penalty", 0f);
    old.put("sampling", sampling);
    old.put("max_new_tokens", 16);
    old.put("stop", List.of("."));
    old.put("ignore_eos", false);
    old.put("stream", true);
    ByteBuffer bytes = new BinaryMessageEncoder<GenericRecord>(GenericData.get(), v1).encode(old);

    BinaryMessageDecoder<PromptRequest> decoder = PromptRequest.createDecoder(null);
    decoder.addSchema(v1);
    PromptRequest now = decoder.decode(bytes);
    assertThat(now.getRequestId()).isEqualTo("old-1");
    assertThat(now.getTenant()).isEqualTo("acme");
    assertThat(now.getSampling().getTopK()).isEqualTo(40);
    assertThat(now.getSampling().getMinP()).isZero();
    assertThat(now.getSampling().getSeed()).isNull();
    assertThat(now.getRoutingKey()).isNull();
    assertThat(now.getStopTokenIds()).isEmpty();
    assertThat(now.getMetadata()).isEmpty();
    assertThat(now.getStream()).isTrue();
  }

  @Test
  void aVersionOneReaderReadsCurrentRecordsIgnoringFieldsItDoesNotKnow() throws Exception {
    PromptRequest now =
        PromptRequest.newBuilder()
            .setRequestId("new-1")
            .setPrompt("Hi")
            .setRoutingKey("k")
            .setSampling(SamplingOptions.newBuilder().setMinP(0.1f).setSeed(3L).build())
            .setMetadata(Map.of("a", "b"))
            .build();
    BinaryMessageDecoder<GenericRecord> oldReader =
        new BinaryMessageDecoder<>(GenericData.get(), v1());
    oldReader.addSchema(PromptRequest.getClassSchema());
    GenericRecord read = oldReader.decode(now.toByteBuffer());
    assertThat(read.get("request_id").toString()).isEqualTo("new-1");
    assertThat(read.get("prompt").toString()).isEqualTo("Hi");
    assertThat(read.hasField("routing_key")).isFalse();
    assertThat(((GenericRecord) read.get("sampling")).hasField("min_p")).isFalse();
  }

  @Test
  void undecodableBytesFailWithAnAvroError() {
    assertThatThrownBy(
            () -> PromptRequest.fromByteBuffer(ByteBuffer.wrap("not avro at all".getBytes())))
        .isInstanceOf(AvroRuntimeException.class);
    byte[] unknownSchema = {(byte) 0xC3, 0x01, 1, 2, 3, 4, 5, 6, 7, 8, 0};
    assertThatThrownBy(() -> PromptRequest.fromByteBuffer(ByteBuffer.wrap(unknownSchema)))
        .isInstanceOf(AvroRuntimeException.class);
  }
}
