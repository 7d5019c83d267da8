package io.flinfer.operators.flink.state;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flinfer.avro.PromptRequest;
import io.flinfer.operators.flink.Detokenizer;
import io.flinfer.operators.flink.FirstSeen;
import io.flinfer.operators.flink.InFlight;
import io.flinfer.operators.flink.TokenizedPrompt;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.junit.jupiter.api.Test;

/**
 * Every piece of operator state round-trips, state written in an earlier format restores under the
 * current one (fields added since take their defaults), and a checkpoint's serializer snapshot says
 * whether this release can read it.
 */
class StateSerializersTest {
  private static TokenizedPrompt prompt() {
    TokenizedPrompt p = new TokenizedPrompt();
    p.request =
        PromptRequest.newBuilder()
            .setRequestId("r-7")
            .setTenant("acme")
            .setPrompt("Once upon a time")
            .setStop(List.of("."))
            .setMetadata(Map.of("user", "u1"))
            .build();
    p.promptIds = new int[] {1, 403, 407};
    p.routingKey = "acme/123";
    p.seed = 42;
    p.topic = "prompts";
    p.partition = 3;
    p.offset = 1187;
    p.queuedAtMillis = 1_000_500;
    p.recordTimestampMillis = 1_000_000;
    return p;
  }

  private static <T> T roundTrip(TypeSerializer<T> s, T value) throws IOException {
    DataOutputSerializer out = new DataOutputSerializer(64);
    s.serialize(value, out);
    return s.deserialize(new DataInputDeserializer(out.getCopyOfBuffer()));
  }

  private static void assertSamePrompt(TokenizedPrompt got, TokenizedPrompt want) {
    assertThat(got).usingRecursiveComparison().isEqualTo(want);
  }

  @Test
  void everyStateRoundTrips() throws IOException {
    InFlight f = roundTrip(new InFlightSerializer(), new InFlight(prompt(), new int[] {5, 6}));
    assertSamePrompt(f.prompt, prompt());
    assertThat(f.generated).containsExactly(5, 6);

    Detokenizer.Progress p = new Detokenizer.Progress();
    p.prompt = prompt();
    p.tokens = new int[] {5, 6, 7};
    p.firstTokenMillis = 1_000_900;
    p.cachedTokens = 2;
    p.unsentLogprobs = new float[] {-0.5f};
    p.queuedMillis = 12;
    p.engineFirstTokenMillis = 30;
    p.unsentTopIds = new int[] {7, 3};
    p.unsentTopLogprobs = new float[] {-0.5f, -1.25f};
    assertThat(roundTrip(new ProgressSerializer(), p)).usingRecursiveComparison().isEqualTo(p);

    FirstSeen seen = new FirstSeen("prompts", 1, 99, 5);
    assertThat(roundTrip(new FirstSeenSerializer(), seen)).isEqualTo(seen);
  }

  /** In-flight state exactly as format 1 wrote it, before the record timestamp was added. */
  private static byte[] inFlightFormat1(TokenizedPrompt p, int[] generated) throws IOException {
    DataOutputSerializer out = new DataOutputSerializer(64);
    out.writeByte(1);
    ByteBuffer b = p.request.toByteBuffer();
    out.writeInt(b.remaining());
    out.write(b.array(), b.arrayOffset() + b.position(), b.remaining());
    out.writeInt(p.promptIds.length);
    for (int id : p.promptIds) {
      out.writeInt(id);
    }
    out.writeUTF(p.routingKey);
    out.writeLong(p.seed);
    out.writeUTF(p.topic);
    out.writeInt(p.partition);
    out.writeLong(p.offset);
    out.writeLong(p.queuedAtMillis);
    out.writeInt(generated.length);
    for (int t : generated) {
      out.writeInt(t);
    }
    return out.getCopyOfBuffer();
  }

  @Test
  void progressOfFormat2RestoresWithoutAlternatives() throws IOException {
    DataOutputSerializer out = new DataOutputSerializer(64);
    out.writeByte(2);
    out.writeBoolean(true);
    PromptFormat.write(prompt(), out);
    Ints.write(new int[] {5, 6}, out);
    out.writeLong(1_000_900);
    out.writeInt(2);
    Ints.writeFloats(new float[] {-0.5f}, out);
    out.writeLong(12);
    out.writeLong(30);
    Detokenizer.Progress p =
        new ProgressSerializer().deserialize(new DataInputDeserializer(out.getCopyOfBuffer()));
    assertSamePrompt(p.prompt, prompt());
    assertThat(p.tokens).containsExactly(5, 6);
    assertThat(p.unsentLogprobs).containsExactly(-0.5f);
    assertThat(p.engineFirstTokenMillis).isEqualTo(30);
    assertThat(p.unsentTopIds).isEmpty();
    assertThat(p.unsentTopLogprobs).isEmpty();
  }

  @Test
  void stateWrittenBeforeAFieldWasAddedRestoresWithItsDefault() throws IOException {
    byte[] old = inFlightFormat1(prompt(), new int[] {9});
    InFlight f = new InFlightSerializer().deserialize(new DataInputDeserializer(old));
    TokenizedPrompt want = prompt();
    // Format 1 had no record timestamp: times then start when the job read the record.
    want.recordTimestampMillis = want.queuedAtMillis;
    assertSamePrompt(f.prompt, want);
    assertThat(f.generated).containsExactly(9);
  }

  @Test
  void stateFromANewerReleaseFailsClearly() {
    byte[] newer = {(byte) 3, 0, 0};
    assertThatThrownBy(() -> new InFlightSerializer().deserialize(new DataInputDeserializer(newer)))
        .isInstanceOf(IOException.class)
        .hasMessageContaining("format 3")
        .hasMessageContaining("formats 1 to 2");
  }

  /** The snapshot a checkpoint holds for serializer class {@code name} of {@code format}. */
  private static VersionedSerializerSnapshot<InFlight> checkpointed(String name, int format)
      throws IOException {
    DataOutputSerializer out = new DataOutputSerializer(64);
    out.writeUTF(name);
    out.writeInt(format);
    VersionedSerializerSnapshot<InFlight> read = new VersionedSerializerSnapshot<>();
    read.readSnapshot(
        1,
        new DataInputDeserializer(out.getCopyOfBuffer()),
        StateSerializersTest.class.getClassLoader());
    return read;
  }

  @Test
  void aCheckpointsSnapshotRestoresItsSerializerAndResolvesCompatibility() throws IOException {
    InFlightSerializer current = new InFlightSerializer();
    TypeSerializerSnapshot<InFlight> now = current.snapshotConfiguration();
    DataOutputSerializer out = new DataOutputSerializer(64);
    now.writeSnapshot(out);
    VersionedSerializerSnapshot<InFlight> read = new VersionedSerializerSnapshot<>();
    read.readSnapshot(
        now.getCurrentVersion(),
        new DataInputDeserializer(out.getCopyOfBuffer()),
        StateSerializersTest.class.getClassLoader());
    assertThat(read.format()).isEqualTo(2);
    assertThat(read.restoreSerializer()).isEqualTo(current);
    assertThat(now.resolveSchemaCompatibility(read).isCompatibleAsIs()).isTrue();

    String name = InFlightSerializer.class.getName();
    // An earlier format of the same state reads as is: each value names its format.
    assertThat(now.resolveSchemaCompatibility(checkpointed(name, 1)).isCompatibleAsIs()).isTrue();
    // A later release's format, or another serializer's state, is refused before any value is read.
    assertThat(now.resolveSchemaCompatibility(checkpointed(name, 3)).isIncompatible()).isTrue();
    assertThat(
            now.resolveSchemaCompatibility(checkpointed(FirstSeenSerializer.class.getName(), 1))
                .isIncompatible())
        .isTrue();
  }
}
