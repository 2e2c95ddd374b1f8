// The extension host's bundles as scripts/host-bundles.mjs links them: dist/extension.js loads
// without its lazy bundles, each lazy bundle exports its modules as the source does, and a module
// listed for one bundle (sql.js's loader, the gateway's schemas) is in that bundle only.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as esbuild from 'esbuild';
import { hostBundleBuild, lazyBundles } from '../../scripts/host-bundles.mjs';

const ROOT = path.resolve(__dirname, '../..');
const BUNDLES = ['extension.js', ...Object.keys(lazyBundles)];

/** Runs `script` in a fresh Node whose `require('vscode')` gets an inert stand-in; prints JSON. */
function inNode(dir: string, script: string): unknown {
  const file = path.join(dir, 'probe.cjs');
  writeFileSync(
    file,
    `const Module = require('node:module');
const load = Module._load;
const inert = new Proxy(function () {}, { get: (t, k) => (k === 'then' ? undefined : inert), apply: () => inert, construct: () => inert });
Module._load = function (request, ...rest) { return request === 'vscode' ? inert : load.call(this, request, ...rest); };
const loaded = () => Object.keys(require.cache).map((f) => require('node:path').basename(f));
${script}`,
  );
  return JSON.parse(execFileSync(process.execPath, [file], { cwd: dir, encoding: 'utf8' })) as unknown;
}

/** A module's runtime exports, as esbuild reads them (a project module alone, a package bundled). */
async function exportsOf(spec: string): Promise<string[]> {
  const own = spec.startsWith('src/');
  const result = await esbuild.build({
    entryPoints: [own ? path.join(ROOT, spec) : spec],
    absWorkingDir: ROOT,
    bundle: !own,
    platform: 'node',
    format: 'esm',
    mainFields: ['module', 'main'],
    write: false,
    outdir: 'out',
    metafile: true,
    logLevel: 'silent',
  });
  const [output] = Object.values(result.metafile.outputs).filter((o) => o.entryPoint !== undefined);
  return output.exports.filter((k) => k !== 'default').sort();
}

describe('the extension host bundles (scripts/host-bundles.mjs)', function () {
  let dir: string;
  const inputs: Record<string, string[]> = {};

  before(async function () {
    this.timeout(120_000);
    dir = mkdtempSync(path.join(os.tmpdir(), 'offpeak-host-bundles-'));
    for (const bundle of BUNDLES) {
      const result = await esbuild.build({
        ...hostBundleBuild(bundle, ROOT),
        bundle: true,
        platform: 'node',
        format: 'cjs',
        target: 'node20',
        minify: true,
        outfile: path.join(dir, bundle),
        external: ['vscode', 'better-sqlite3', 'mysql2'],
        mainFields: ['module', 'main'],
        metafile: true,
        logLevel: 'silent',
      });
      const [output] = Object.values(result.metafile.outputs);
      inputs[bundle] = Object.keys(output.inputs).filter((f) => output.inputs[f].bytesInOutput > 0);
    }
  });

  after(() => rmSync(dir, { recursive: true, force: true }));

  it('item 8: no host bundle reads the global navigator (the extension host logs "PendingMigrationError: navigator is now a global in nodejs" for it; zod probes it)', () => {
    for (const bundle of BUNDLES) assert.doesNotMatch(readFileSync(path.join(dir, bundle), 'utf8'), /\bnavigator\b/, bundle);
  });

  it('extension.js loads without any lazy bundle, and holds no zod and no sql.js', () => {
    const seen = inNode(
      dir,
      `const ext = require('./extension.js');\nconsole.log(JSON.stringify({ activate: typeof ext.activate, loaded: loaded() }));`,
    ) as {
      activate: string;
      loaded: string[];
    };
    assert.equal(seen.activate, 'function');
    assert.deepEqual(
      seen.loaded.filter((f) => BUNDLES.includes(f)),
      ['extension.js'],
    );
    assert.deepEqual(
      inputs['extension.js'].filter((f) => /node_modules\/(zod|sql\.js)\//.test(f)),
      [],
    );
  });

  it('the GitHub client (Octokit) is in forge.js alone: engine.js requires it only when a pull request needs it', () => {
    assert.ok(
      inputs['forge.js'].some((f) => /node_modules\/@octokit\/rest\//.test(f)),
      'forge.js holds @octokit/rest',
    );
    for (const bundle of ['extension.js', 'engine.js', 'personal.js', 'runtime.js'])
      assert.deepEqual(
        inputs[bundle].filter((f) => /node_modules\/@octokit\//.test(f)),
        [],
        `${bundle} holds no copy of Octokit`,
      );
  });

  it("item 8: extension.js holds neither a review's reads of a task's files nor a task terminal's feed: each loads on first use", () => {
    const firstUse = /src\/agent\/(workplace\/(task-changes|hardened-git)|runtime\/(task-terminal-feed|segment-logs))\.ts$/;
    assert.deepEqual(
      inputs['extension.js'].filter((f) => firstUse.test(f)),
      [],
    );
  });

  it('each lazy bundle exports every module listed for it, with the exports of its source', async () => {
    const exported = inNode(
      dir,
      `const out = {};
for (const [bundle, specs] of Object.entries(${JSON.stringify(lazyBundles)})) {
  const b = require('./' + bundle);
  out[bundle] = { count: Object.keys(b).length, modules: specs.map((_, i) => Object.keys(b['m' + i] ?? {}).filter((k) => k !== 'default').sort()) };
}
console.log(JSON.stringify(out));`,
    ) as Record<string, { count: number; modules: string[][] }>;
    for (const [bundle, specs] of Object.entries(lazyBundles)) {
      assert.equal(exported[bundle].count, specs.length, bundle);
      assert.deepEqual(exported[bundle].modules, await Promise.all(specs.map(exportsOf)), bundle);
    }
  });

  it('item 8: a schema error from a lazy bundle reads in English (zod/mini has no messages of its own: src/protocol/zod.ts gives them)', () => {
    const notify = lazyBundles['engine.js'].indexOf('src/protocol/notify.ts');
    const seen = inNode(
      dir,
      `const { NotifyTargetSchema } = require('./engine.js').m${notify};
const r = NotifyTargetSchema.safeParse({ kind: 'fax', url: 3 });
console.log(JSON.stringify(r.error.issues.map((i) => i.message)));`,
    );
    assert.deepEqual(seen, [
      'Invalid option: expected one of "ntfy"|"slack"|"discord"|"webhook"',
      'Invalid input: expected string, received number',
    ]);
  });

  it("item 8: engine.js loads without runtime.js and holds none of an agent's start (its launch, its ticket proxy), which runtime.js holds", () => {
    const seen = inNode(dir, `require('./engine.js');\nconsole.log(JSON.stringify(loaded()));`) as string[];
    assert.deepEqual(
      seen.filter((f) => BUNDLES.includes(f)),
      ['engine.js'],
    );
    const start = /src\/agent\/(runtime\/segment-(runner|work|launch)|proxy\/ticket-proxy)\.ts$/;
    assert.deepEqual(
      inputs['engine.js'].filter((f) => start.test(f)),
      [],
    );
    assert.equal(inputs['runtime.js'].filter((f) => start.test(f)).length, 4);
  });

  it("personal.js reaches sql.js, the gateway's schemas with zod, and the temp-file counter in engine.js, and has no copy of its own", () => {
    const seen = inNode(dir, `require('./personal.js');\nconsole.log(JSON.stringify(loaded()));`) as string[];
    assert.ok(seen.includes('engine.js'), 'personal.js did not load engine.js');
    assert.deepEqual(
      inputs['personal.js'].filter((f) =>
        /node_modules\/(zod|sql\.js)\/|src\/protocol\/gateway\.ts|src\/store\/db\/sqljs\.ts|src\/files\/file-replace\.ts/.test(f),
      ),
      [],
    );
  });
  it("personal.js's local authority runs on engine.js's sql.js: once it serves, engine.js has sql.js loaded already", function () {
    this.timeout(60_000);
    const wasm = path.join(path.dirname(require.resolve('sql.js')), 'sql-wasm.wasm');
    const storage = mkdtempSync(path.join(dir, 'storage-'));
    const sqljs = lazyBundles['engine.js'].indexOf('src/store/db/sqljs.ts');
    const seen = inNode(
      dir,
      `(async () => {
  const { LocalAuthority } = require('./personal.js').m0;
  const authority = await LocalAuthority.start({
    storageDir: ${JSON.stringify(storage)},
    wasmPath: ${JSON.stringify(wasm)},
    settings: () => ({ hours: 'always', modelBaseUrl: 'http://127.0.0.1:9' }),
    modelApiKey: async () => undefined,
    durable: false,
  });
  const served = { url: typeof authority.url, serving: authority.serving };
  // Loaded by the authority through engine.js: a path that does not exist is not even looked at.
  const again = await require('./engine.js').m${sqljs}.loadSqlJs('/nowhere/sql-wasm.wasm').then(() => 'loaded', (e) => e.message);
  await authority.dispose();
  console.log(JSON.stringify({ ...served, again }));
})().catch((e) => { console.error(e); process.exit(1); });`,
    );
    assert.deepEqual(seen, { url: 'string', serving: true, again: 'loaded' });
  });
});
