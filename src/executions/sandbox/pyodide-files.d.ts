// Pyodide's runtime files are embedded with `with { type: "file" }`: each import is a path.
declare module "*/pyodide.asm.wasm" {
  const path: string;
  export default path;
}
declare module "*/python_stdlib.zip" {
  const path: string;
  export default path;
}
declare module "*/pyodide.asm.mjs" {
  const path: string;
  export default path;
}
