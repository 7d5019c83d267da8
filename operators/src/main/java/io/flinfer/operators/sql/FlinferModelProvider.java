package io.flinfer.operators.sql;

import org.apache.flink.table.functions.AsyncPredictFunction;
import org.apache.flink.table.functions.PredictFunction;
import org.apache.flink.table.ml.AsyncPredictRuntimeProvider;
import org.apache.flink.table.ml.ModelProvider;
import org.apache.flink.table.ml.PredictRuntimeProvider;

/** A flinfer model for {@code ML_PREDICT}: asynchronous (batched) by default, or synchronous. */
final class FlinferModelProvider implements AsyncPredictRuntimeProvider, PredictRuntimeProvider {
  private final FlinferPredictFunctions.Lease lease;

  FlinferModelProvider(FlinferPredictFunctions.Lease lease) {
    this.lease = lease;
  }

  @Override
  public AsyncPredictFunction createAsyncPredictFunction(Context context) {
    return new FlinferPredictFunctions.Async(lease);
  }

  @Override
  public PredictFunction createPredictFunction(Context context) {
    return new FlinferPredictFunctions.Sync(lease);
  }

  @Override
  public ModelProvider copy() {
    return new FlinferModelProvider(lease);
  }
}
