package io.flinfer.operators.sql;

import static io.flinfer.operators.sql.FlinferModelOptions.*;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.flinfer.avro.PromptRequest;
import io.flinfer.avro.SamplingOptions;
import io.flinfer.operators.engine.EngineConfig;
import io.flinfer.operators.engine.SpeculativeConfig;
import io.flinfer.operators.flink.ModelSource;
import io.flinfer.operators.predict.PredictionEngine;
import io.flinfer.operators.request.RequestLimits;
import io.flinfer.runtime.chat.ChatTemplate;
import io.flinfer.runtime.grammar.ResponseFormat;
import io.flinfer.runtime.sampling.SamplingParams;
import java.util.Set;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ReadableConfig;
import org.apache.flink.table.catalog.ResolvedCatalogModel;
import org.apache.flink.table.factories.FactoryUtil;
import org.apache.flink.table.factories.ModelProviderFactory;
import org.apache.flink.table.ml.ModelProvider;

/**
 * {@code CREATE MODEL m INPUT (prompt STRING) OUTPUT (text STRING, ...) WITH ('provider' =
 * 'flinfer', 'model-path' = '...')}: a model that {@code ML_PREDICT} serves with Flinfer's engine.
 */
public final class FlinferModelProviderFactory implements ModelProviderFactory {
  public static final String IDENTIFIER = "flinfer";

  @Override
  public String factoryIdentifier() {
    return IDENTIFIER;
  }

  @Override
  public Set<ConfigOption<?>> requiredOptions() {
    return Set.of(MODEL_PATH);
  }

  @Override
  public Set<ConfigOption<?>> optionalOptions() {
    return Set.of(
        TOKENIZER_PATH,
        BACKEND,
        MAX_RUNNING_REQUESTS,
        MAX_TOTAL_TOKENS,
        THREADS,
        SPECULATIVE_NUM_DRAFT_TOKENS,
        MAX_TOKENS,
        TEMPERATURE,
        TOP_P,
        SEED,
        RESPONSE_FORMAT,
        JSON_SCHEMA,
        REGEX,
        GRAMMAR,
        CHAT_TEMPLATE_KWARGS,
        THINKING_TOKEN_BUDGET,
        TOOLS);
  }

  @Override
  public ModelProvider createModelProvider(Context context) {
    FactoryUtil.ModelProviderFactoryHelper helper =
        FactoryUtil.createModelProviderFactoryHelper(this, context);
    helper.validate();
    ReadableConfig o = helper.getOptions();
    ResolvedCatalogModel model = context.getCatalogModel();
    int drafts = o.get(SPECULATIVE_NUM_DRAFT_TOKENS);
    if (drafts < 0 || drafts > SpeculativeConfig.MAX_DRAFT_TOKENS) {
      throw new org.apache.flink.table.api.ValidationException(
          "speculative-num-draft-tokens must be in [0, "
              + SpeculativeConfig.MAX_DRAFT_TOKENS
              + "], got "
              + drafts);
    }
    EngineConfig engine =
        EngineConfig.builder()
            .maxRunningRequests(o.get(MAX_RUNNING_REQUESTS))
            .maxTotalTokens(o.get(MAX_TOTAL_TOKENS))
            .threads(o.get(THREADS))
            .speculative(drafts == 0 ? null : SpeculativeConfig.ngram(drafts))
            .build();
    RequestLimits limits = RequestLimits.defaults();
    if (o.get(MAX_TOKENS) < 1 || o.get(MAX_TOKENS) > limits.maxNewTokens()) {
      throw new org.apache.flink.table.api.ValidationException(
          "max-tokens must be in [1, " + limits.maxNewTokens() + "]");
    }
    String format = o.get(RESPONSE_FORMAT);
    String schema = o.getOptional(JSON_SCHEMA).orElse(null);
    String regex = o.getOptional(REGEX).orElse(null);
    String grammar = o.getOptional(GRAMMAR).orElse(null);
    try {
      // The same checks a prompt record's format gets, once for the whole model.
      SamplingParams.builder()
          .responseFormat(ResponseFormat.of(format))
          .jsonSchema(schema)
          .regex(regex)
          .grammar(grammar)
          .build();
    } catch (IllegalArgumentException e) {
      throw new org.apache.flink.table.api.ValidationException(e.getMessage(), e);
    }
    String kwargs = o.getOptional(CHAT_TEMPLATE_KWARGS).orElse(null);
    try {
      ChatTemplate.kwargs(kwargs);
    } catch (IllegalArgumentException e) {
      throw new org.apache.flink.table.api.ValidationException(e.getMessage(), e);
    }
    Integer budget = o.getOptional(THINKING_TOKEN_BUDGET).orElse(null);
    if (budget != null && budget < 0) {
      throw new org.apache.flink.table.api.ValidationException(
          "thinking-token-budget must be >= 0, got " + budget);
    }
    String tools = o.getOptional(TOOLS).orElse(null);
    if (tools != null && !isArray(tools)) {
      throw new org.apache.flink.table.api.ValidationException(
          "tools must be a JSON array of tools, as OpenAI's API takes them");
    }
    PredictionEngine.Key key =
        new PredictionEngine.Key(
            new ModelSource(o.get(MODEL_PATH), o.getOptional(TOKENIZER_PATH).orElse(null)),
            engine,
            o.get(BACKEND),
            limits);
    return new FlinferModelProvider(
        new FlinferPredictFunctions.Lease(
            key,
            PromptColumn.of(
                model.getResolvedInputSchema(),
                PromptRequest.newBuilder()
                    .setRequestId("row")
                    .setMaxNewTokens(o.get(MAX_TOKENS))
                    .setResponseFormat(format)
                    .setJsonSchema(schema)
                    .setRegex(regex)
                    .setGrammar(grammar)
                    .setChatTemplateKwargs(kwargs)
                    .setThinkingTokenBudget(budget)
                    .setTools(tools)
                    .setSampling(
                        SamplingOptions.newBuilder()
                            .setTemperature(o.get(TEMPERATURE).floatValue())
                            .setTopP(o.get(TOP_P).floatValue())
                            .setSeed(o.getOptional(SEED).orElse(null))
                            .build())
                    .build()),
            PredictionColumns.of(model.getResolvedOutputSchema())));
  }

  private static boolean isArray(String json) {
    try {
      return new ObjectMapper().readTree(json).isArray();
    } catch (JsonProcessingException e) {
      return false;
    }
  }
}
