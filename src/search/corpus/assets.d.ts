// The sample corpus passages are embedded with `with { type: "file" }`: the import is a path.
declare module "*.jsonl" {
  const path: string;
  export default path;
}
