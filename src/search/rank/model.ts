/**
 * The learned ranker: a linear model over standardised candidate features (features.ts),
 * fitted on the tuning questions only by scripts/fit-ranker.ts (pairwise logistic loss,
 * L2 strength chosen by cross-validation); the fitted weights ship in weights.json.
 */
import fitted from "./weights.json";
import { FEATURES, type FeatureVector } from "./features";

export interface RankerModel {
  features: readonly string[];
  mean: readonly number[];
  scale: readonly number[];
  weights: readonly number[];
}

export const DEFAULT_RANKER: RankerModel = fitted;

/** Checks a model matches this build's features, so a stale weights file fails loudly, not silently. */
export function checkModel(model: RankerModel): RankerModel {
  if (model.features.join(",") !== FEATURES.join(",")) {
    throw new Error(`ranker weights are for features [${model.features.join(", ")}], this build computes [${FEATURES.join(", ")}]`);
  }
  return model;
}

export function scoreCandidate(model: RankerModel, f: FeatureVector): number {
  let score = 0;
  for (let i = 0; i < f.length; i++) score += model.weights[i]! * ((f[i]! - model.mean[i]!) / model.scale[i]!);
  return score;
}
