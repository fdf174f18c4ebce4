// @energetic-ai/core re-exports @tensorflow/tfjs-* types from packages it bundles but does not
// install, so TypeScript sees none of them. These are the few members use-lite.ts calls.
import type {} from "@energetic-ai/core";

declare module "@energetic-ai/core" {
  export type WeightSpec = { name: string; shape: number[]; dtype: string };
  export type ModelArtifacts = { modelTopology: object; weightSpecs: WeightSpec[]; weightData: ArrayBuffer };
  export type IOHandler = object;
  export type GraphModel = { executeAsync(inputs: object): Promise<unknown> };
  export function ready(): Promise<void>;
  export function setBackend(name: "wasm"): Promise<boolean>;
  export function setWasmPaths(files: Record<string, string>): void;
  export function loadGraphModel(handler: IOHandler): Promise<GraphModel>;
  export const io: { fromMemory(artifacts: ModelArtifacts): IOHandler };
}
