// The docs say what the code does: every setting with its real default and range, every
// command of `regkb --help`; the README stays a front door; every link between them leads
// somewhere. (The error table and the corpus example are checked by their own tests.)
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { ConfigError, loadConfig, type Env } from "../../src/config";
import { runBinary } from "../helpers/binary";

const ROOT = join(import.meta.dir, "..", "..");
const read = (path: string) => readFileSync(join(ROOT, path), "utf8");
const OPERATIONS = read("docs/operations.md");

/** Markdown without its fenced code blocks. */
const prose = (markdown: string) => markdown.replace(/^```[\s\S]*?^```/gm, "");

/** The text under a heading, up to the next heading of any level. */
function section(markdown: string, heading: string): string {
  const start = markdown.indexOf(`\n${heading}\n`);
  if (start < 0) throw new Error(`no "${heading}" heading`);
  const rest = markdown.slice(start + heading.length + 2);
  const end = rest.search(/^#{1,6} /m);
  return end < 0 ? rest : rest.slice(0, end);
}

/** Table rows of a section whose first cell is a `REGKB_…` variable, as trimmed cells. */
function variableRows(text: string): { name: string; cells: string[] }[] {
  return text
    .split("\n")
    .filter((line) => line.startsWith("| `REGKB_"))
    .map((line) => line.slice(1, -1).split(" | ").map((cell) => cell.trim()))
    .map((cells) => ({ name: cells[0]!.replaceAll("`", ""), cells: cells.slice(1) }));
}

const SETTINGS = variableRows(section(OPERATIONS, "## Configuration"));
const CHILD_VARIABLES = variableRows(section(OPERATIONS, "### Variables the server sets for its children"));

function variablesNamedInSrc(): string[] {
  const names = new Set<string>();
  for (const file of new Bun.Glob("**/*.ts").scanSync(join(ROOT, "src"))) {
    for (const m of read(join("src", file)).matchAll(/\bREGKB_[A-Z0-9]+(?:_[A-Z0-9]+)*/g)) names.add(m[0]);
  }
  return [...names].sort();
}

/** What a variable needs beside it to be read at all: the `openai` embedder's settings are read only for it. */
function context(name: string): Env {
  return {
    REGKB_EMBEDDER_URL: "http://127.0.0.1:9",
    REGKB_EMBEDDER_MODEL: "a-model",
    ...(name.startsWith("REGKB_EMBEDDER_") ? { REGKB_EMBEDDER: "openai" } : {}),
  };
}

const loadingWith = (name: string, value: string) => () => loadConfig({ ...context(name), [name]: value });

describe("docs/operations.md: configuration", () => {
  test("every REGKB_ variable named in src/ is in a table, and every variable in the tables is in src/", () => {
    const documented = [...SETTINGS, ...CHILD_VARIABLES].map((r) => r.name);
    expect(new Set(documented).size).toBe(documented.length);
    expect(documented.toSorted()).toEqual(variablesNamedInSrc());
  });

  test("every setting has a default, and a default written as a value is the code's default", () => {
    let checked = 0;
    for (const { name, cells } of SETTINGS) {
      const [defaultCell] = cells;
      expect(defaultCell, name).toBeTruthy();
      const literal = /^`([^`]*)`/.exec(defaultCell!)?.[1];
      if (literal === undefined) continue;
      expect(loadConfig({ ...context(name), [name]: literal }), name).toEqual(loadConfig(context(name)));
      checked++;
    }
    expect(checked).toBeGreaterThan(20);
  });

  test("a documented integer range is the code's: both ends accepted, one past either refused", () => {
    let checked = 0;
    for (const { name, cells } of SETTINGS) {
      const range = /^([\d,]+)–([\d,]+)$/.exec(cells[1] ?? "");
      if (range === null) continue;
      const [min, max] = [Number(range[1]!.replaceAll(",", "")), Number(range[2]!.replaceAll(",", ""))];
      expect(loadingWith(name, String(min)), `${name}=${min}`).not.toThrow();
      expect(loadingWith(name, String(max)), `${name}=${max}`).not.toThrow();
      expect(loadingWith(name, String(min - 1)), `${name}=${min - 1}`).toThrow(ConfigError);
      expect(loadingWith(name, String(max + 1)), `${name}=${max + 1}`).toThrow(ConfigError);
      checked++;
    }
    expect(checked).toBeGreaterThan(15);
  });

  test("documented choices are accepted and anything else is refused", () => {
    let checked = 0;
    for (const { name, cells } of SETTINGS) {
      if (!/^`[^`]+`(, `[^`]+`)+$/.test(cells[1] ?? "")) continue;
      for (const [, value] of cells[1]!.matchAll(/`([^`]+)`/g)) expect(loadingWith(name, value!), `${name}=${value}`).not.toThrow();
      expect(loadingWith(name, "something-else"), name).toThrow(ConfigError);
      checked++;
    }
    expect(checked).toBe(3);
  });
});

test("docs/operations.md lists every command of `regkb --help`, usage for usage", () => {
  const help = runBinary(["--help"]);
  expect(help.exitCode).toBe(0);
  const usages = [...help.stdout.matchAll(/^ {2}(regkb \S.*?) {2,}\S/gm)].map((m) => m[1]!);
  expect(usages.length).toBeGreaterThan(15);
  const commandLine = section(OPERATIONS, "## Command line");
  for (const usage of usages) expect(commandLine, usage).toContain(`\n${usage}`);
});

describe("README.md", () => {
  const readme = read("README.md");

  test("opens with the two set-up commands, then a curl, then where to read more", () => {
    const blocks = [...readme.matchAll(/^```\w*\n([\s\S]*?)^```/gm)].map((m) => m[1]!);
    expect(blocks[0]).toBe("npm install && npm start\nnpm test\n");
    expect(blocks[1]).toContain("curl -s localhost:8080/v1/search");
    expect(readme.indexOf("## Read more")).toBeGreaterThan(readme.indexOf(blocks[1]!));
    for (const doc of readdirSync(join(ROOT, "docs"))) expect(section(readme, "## Read more")).toContain(`](docs/${doc})`);
  });

  test("stays a front door: at most 250 lines", () => {
    expect(readme.split("\n").length).toBeLessThanOrEqual(250);
  });
});

/** GitHub's anchor for a heading: lower case, punctuation dropped, each space a hyphen. */
const anchorOf = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");

function anchorsOf(file: string): Set<string> {
  return new Set([...prose(read(file)).matchAll(/^#{1,6} (.+)$/gm)].map((m) => anchorOf(m[1]!)));
}

test("every relative link in README.md and docs/ leads to a file that exists, and to a heading it has", () => {
  const files = ["README.md", ...readdirSync(join(ROOT, "docs")).map((f) => `docs/${f}`)];
  let links = 0;
  for (const file of files) {
    for (const [, target] of prose(read(file)).matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target!)) continue;
      const [path, anchor] = target!.split("#");
      const linked = path === "" ? file : relative(ROOT, join(ROOT, dirname(file), path!));
      expect(existsSync(join(ROOT, linked)), `${file} → ${target}`).toBe(true);
      if (anchor !== undefined) expect(anchorsOf(linked).has(anchor), `${file} → ${target}`).toBe(true);
      links++;
    }
  }
  expect(links).toBeGreaterThan(15);
});
