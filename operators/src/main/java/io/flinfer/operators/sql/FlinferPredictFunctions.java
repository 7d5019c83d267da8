package io.flinfer.operators.sql;

import io.flinfer.avro.PromptRequest;
import io.flinfer.operators.predict.Prediction;
import io.flinfer.operators.predict.PredictionEngine;
import java.io.Serializable;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.functions.AsyncPredictFunction;
import org.apache.flink.table.functions.FunctionContext;
import org.apache.flink.table.functions.PredictFunction;

/**
 * The predict functions: thin shells that turn a row into a prompt, hand it to the JVM's shared
 * {@link PredictionEngine} (so concurrent rows are batched together and share its radix cache), and
 * turn the completion into a row.
 */
public final class FlinferPredictFunctions {
  private FlinferPredictFunctions() {}

  /** A function's hold on the shared engine, and its row mappings. */
  static final class Lease implements Serializable {
    private final PredictionEngine.Key key;
    private final PromptColumn input;
    private final PredictionColumns output;
    private transient PredictionEngine engine;

    Lease(PredictionEngine.Key key, PromptColumn input, PredictionColumns output) {
      this.key = key;
      this.input = input;
      this.output = output;
    }

    void open() {
      engine = PredictionEngine.acquire(key);
    }

    CompletableFuture<Prediction> submit(RowData row) {
      PromptRequest r = input.request(row);
      if (output.scoresPrompt()) {
        r = PromptRequest.newBuilder(r).setStream(true).setPromptLogprobs(0).build();
      }
      return engine.submit(r);
    }

    Collection<RowData> rows(Prediction p) {
      return List.of(output.row(p));
    }

    void close() {
      if (engine != null) {
        engine.release();
        engine = null;
      }
    }
  }

  /** Rows in flight together (up to the async operator's capacity), batched by the engine. */
  public static final class Async extends AsyncPredictFunction {
    private final Lease lease;

    Async(Lease lease) {
      this.lease = lease;
    }

    @Override
    public void open(FunctionContext context) {
      lease.open();
    }

    @Override
    public CompletableFuture<Collection<RowData>> asyncPredict(RowData row) {
      return lease.submit(row).thenApply(lease::rows);
    }

    @Override
    public void close() {
      lease.close();
    }
  }

  /** One row at a time; for completeness (the async function batches). */
  public static final class Sync extends PredictFunction {
    private final Lease lease;

    Sync(Lease lease) {
      this.lease = lease;
    }

    @Override
    public void open(FunctionContext context) {
      lease.open();
    }

    @Override
    public Collection<RowData> predict(RowData row) {
      return lease.rows(lease.submit(row).join());
    }

    @Override
    public void close() {
      lease.close();
    }
  }
}
