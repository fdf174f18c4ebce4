// Files pulled into the compiled binary. `with { type: "text" }` gives the contents;
// `with { type: "file" }` gives a path (inside /$bunfs/ when compiled).
declare module "*.sql" {
  const text: string;
  export default text;
}
declare module "*.so" {
  const path: string;
  export default path;
}
declare module "*/browser/standalone.js" {
  const path: string;
  export default path;
}
