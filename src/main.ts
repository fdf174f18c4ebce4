// Entry point of the one binary: the operator CLI, the server (`serve`), the execution
// sandbox child (`__sandbox`) and the PDF parser child (`__pdf`); the last two are
// started only by the server itself.
const args = process.argv.slice(2);

if (args[0] === "__sandbox") {
  const { sandboxMain } = await import("./executions/sandbox/child");
  await sandboxMain();
} else if (args[0] === "__pdf") {
  const { pdfChildMain } = await import("./documents/pdf/child");
  await pdfChildMain();
} else {
  const { runCli } = await import("./cli/index");
  process.exitCode = await runCli(args, process.env);
}
export {};
