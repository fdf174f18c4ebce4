/** dist/regkb may not grow past this (issue 15): 150 MB. scripts/build.ts fails past it, and a test checks it. */
export const BINARY_BYTES_MAX = 150_000_000;
