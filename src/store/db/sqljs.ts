/**
 * Loads sql.js once per process. The wasm file is found through `locateFile`:
 * - in the extension bundle it is dist/sql-wasm.wasm beside dist/extension.js (esbuild copies it);
 * - in Node tests and tools it is resolved from node_modules/sql.js/dist.
 * Callers may inject the exact path (the composition root knows the extension's folder).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import initSqlJs, { type SqlJsStatic } from 'sql.js';

let loading: Promise<SqlJsStatic> | undefined;
let loadedFrom: string | undefined;

/** Where sql-wasm.wasm is when no path is injected. */
export function defaultWasmPath(): string {
  // Bundled: dist/extension.js and dist/sql-wasm.wasm sit side by side.
  if (typeof __dirname === 'string') {
    const beside = path.join(__dirname, 'sql-wasm.wasm');
    if (existsSync(beside)) return beside;
  }
  // Not bundled: found in node_modules at run time (tests, tools). An alias keeps esbuild from
  // trying to bundle the wasm when this module is part of a bundle that never reaches this line.
  const runtimeRequire = require;
  return runtimeRequire.resolve('sql.js/dist/sql-wasm.wasm');
}

/**
 * The process-wide sql.js module. The first call decides the wasm path; later calls with a
 * different path get the already-loaded module (one wasm instance per process is enough).
 */
export function loadSqlJs(wasmPath?: string): Promise<SqlJsStatic> {
  if (!loading) {
    const file = wasmPath ?? defaultWasmPath();
    loadedFrom = file;
    loading = initSqlJs({ locateFile: () => file }).catch((err: unknown) => {
      loading = undefined;
      throw new Error(`could not load sql.js wasm from ${file}: ${(err as Error).message}`);
    });
  }
  return loading;
}

/** The wasm path sql.js was loaded from in this process (diagnostics). */
export function sqlJsWasmPath(): string | undefined {
  return loadedFrom;
}
