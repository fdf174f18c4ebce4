// The lexicon is embedded with `with { type: "file" }`: the import is a path.
declare module "*.tsv" {
  const path: string;
  export default path;
}
