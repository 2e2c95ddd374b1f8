// Builds the bundles the project ships and places sql.js's wasm and ctrlc-windows' helper
// (dist/ctrlc-windows/<arch>/process-killer.exe) beside the extension.
//   dist/extension.js        VS Code extension host: what activation needs (CJS, 'vscode' external)
//   dist/engine.js           its engine, panel and command helpers, required on first use
//   dist/personal.js         its personal-mode local authority (the reference gateway), likewise
//   dist/forge.js            the GitHub API client (Octokit), when a pull request is first opened
//   dist/webview/main.js     Preact webview (browser IIFE)
//   dist/gateway.js          reference Off-Peak Gateway server (Node CJS)
//   dist/reference-agent.js  bundled reference agent CLI (Node CJS)
//   dist/permission-mcp.js   MCP server through which a headless Claude Code asks the host (Node CJS)
//   dist/test/vscode/*.js    the suite that runs inside a real VS Code (never shipped in the .vsix)
// usage: node esbuild.mjs [--watch] [--production] [--quiet]
//   --quiet       `npm start`'s build: only warnings and errors are printed, and the in-VS Code test
//                 suite is not built (a user of `npm start` has no use for its bundle list or sizes)
//   --production  minified bundles for the .vsix (`npm run package`). Their source maps are written
//                 beside them WITHOUT a sourceMappingURL comment and are left out of the .vsix: the
//                 extension sends no error reports, so a map would only add weight to every install;
//                 a maintainer symbolicates a user's stack trace with the maps of the same build.
import * as esbuild from 'esbuild';
import { copyFileSync, mkdirSync, readdirSync, existsSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { hostBundleBuild, lazyBundles } from './scripts/host-bundles.mjs';
import { packageDirsOfInputs, thirdPartyNotices } from './scripts/third-party-notices.mjs';

const require = createRequire(import.meta.url);
const watch = process.argv.includes('--watch');
const production = process.argv.includes('--production');
const quiet = process.argv.includes('--quiet');

/**
 * zod's classic `z` namespace re-exports every locale (`z.locales`), which esbuild cannot shake:
 * ~260 kB minified in each bundle that has it (the MCP SDK's zod in dist/permission-mcp.js; the
 * project's own schemas use zod/mini, src/protocol/zod.ts). The project never switches zod's
 * locale, so only English is kept.
 */
const zodEnglishOnly = {
  name: 'zod-english-only',
  setup(build) {
    build.onLoad({ filter: /[\\/]zod[\\/]v4[\\/]locales[\\/]index\.js$/ }, (args) => ({
      contents: 'export { default as en } from "./en.js";',
      resolveDir: path.dirname(args.path),
      loader: 'js',
    }));
  },
};

const shipped = {
  bundle: true,
  sourcemap: production ? 'external' : true,
  minify: production,
  logLevel: quiet ? 'warning' : 'info',
  plugins: [zodEnglishOnly],
};
const node = { ...shipped, platform: 'node', format: 'cjs', target: 'node20' };

const vscodeTestEntries = existsSync('test/vscode')
  ? readdirSync('test/vscode')
      .filter((f) => f.endsWith('.ts'))
      .map((f) => path.join('test/vscode', f))
  : [];

const builds = [
  // dist/extension.js and its lazy bundles (scripts/host-bundles.mjs). Personal mode runs the
  // reference gateway in the extension host on its sql.js store: the native and MySQL stores'
  // modules, required only when such a store opens, stay out of the bundles; the gateway's
  // jsonc-parser needs its "module" build, as in dist/gateway.js.
  ...['extension.js', ...Object.keys(lazyBundles)].map((bundle) => {
    const { plugins, ...entry } = hostBundleBuild(bundle, process.cwd());
    return {
      ...node,
      ...entry,
      outfile: `dist/${bundle}`,
      external: ['vscode', 'better-sqlite3', 'mysql2'],
      mainFields: ['module', 'main'],
      plugins: [...node.plugins, ...plugins],
    };
  }),
  // jsonc-parser's "main" is a UMD build esbuild cannot follow; its "module" build bundles.
  {
    ...node,
    entryPoints: ['src/gateway/main.ts'],
    outfile: 'dist/gateway.js',
    external: ['better-sqlite3', 'mysql2'],
    mainFields: ['module', 'main'],
  },
  { ...node, entryPoints: ['src/reference-agent/main.ts'], outfile: 'dist/reference-agent.js', banner: { js: '#!/usr/bin/env node' } },
  { ...node, entryPoints: ['src/permission-mcp/main.ts'], outfile: 'dist/permission-mcp.js' },
  {
    ...shipped,
    platform: 'browser',
    format: 'iife',
    target: 'es2022',
    entryPoints: ['webview/main.tsx'],
    outfile: 'dist/webview/main.js',
    jsx: 'automatic',
    jsxImportSource: 'preact',
  },
];
if (vscodeTestEntries.length > 0 && !quiet) {
  // Mocha runs inside the extension host; 'vscode' and 'mocha' come from the host / node_modules.
  // Never minified: a failing test's stack trace should read as the source does.
  builds.push({
    ...node,
    minify: false,
    sourcemap: true,
    entryPoints: vscodeTestEntries,
    outdir: 'dist/test/vscode',
    external: ['vscode', 'mocha'],
  });
}

function copyWasm() {
  mkdirSync('dist', { recursive: true });
  const wasm = path.join(path.dirname(require.resolve('sql.js')), 'sql-wasm.wasm');
  copyFileSync(wasm, 'dist/sql-wasm.wasm');
}

/**
 * For the watch task behind F5 (.vscode/tasks.json): one line when every bundle is done (VS Code
 * waits for it before launching), and each error on one `file:line:col: message` line (its
 * problem matcher).
 */
function watchReporter(total) {
  const building = new Set();
  const builtOnce = new Set();
  let errors = 0;
  return {
    name: 'watch-reporter',
    setup(build) {
      const id = build.initialOptions.outfile ?? build.initialOptions.outdir;
      build.onStart(() => {
        if (building.size === 0) {
          console.log('[watch] building');
          errors = 0;
        }
        building.add(id);
      });
      build.onEnd((result) => {
        errors += result.errors.length;
        for (const e of result.errors) {
          const at = e.location ? `${e.location.file}:${e.location.line}:${e.location.column + 1}: ` : '';
          console.log(`[watch] error: ${at}${e.text}`);
        }
        building.delete(id);
        builtOnce.add(id);
        if (building.size === 0 && builtOnce.size === total) {
          console.log(errors === 0 ? `[watch] all ${total} bundles built` : `[watch] ${errors} build error(s), see above`);
        }
      });
    },
  };
}

/** The codicon font and its stylesheet, for the webview's icons (served from dist/webview). */
function copyCodicons() {
  mkdirSync('dist/webview', { recursive: true });
  const dir = path.dirname(require.resolve('@vscode/codicons/dist/codicon.css'));
  for (const file of ['codicon.css', 'codicon.ttf']) copyFileSync(path.join(dir, file), path.join('dist/webview', file));
}

/**
 * ctrlc-windows' helper, the graceful stop's Ctrl+C on Windows (src/core/process-control.ts), for
 * both Windows architectures: the bundle finds it beside itself in dist/ctrlc-windows/<arch>/.
 */
function copyCtrlCHelper() {
  let dir;
  try {
    dir = path.join(path.dirname(require.resolve('ctrlc-windows/package.json')), 'dist');
  } catch (err) {
    // A checkout whose node_modules predates the dependency: a build for the .vsix must not go
    // without it; a development build warns (on Windows its stops would be forced at once).
    if (production) throw err;
    console.warn('esbuild: ctrlc-windows is not installed (npm ci): dist/ctrlc-windows/ not written');
    return;
  }
  for (const arch of ['x64', 'arm64']) {
    mkdirSync(path.join('dist/ctrlc-windows', arch), { recursive: true });
    copyFileSync(path.join(dir, arch, 'process-killer.exe'), path.join('dist/ctrlc-windows', arch, 'process-killer.exe'));
  }
}

/** dist/THIRD-PARTY-NOTICES.txt: the packages in the shipped bundles and the files copied beside them. */
function writeNotices(results) {
  const inputs = results.flatMap((r) => Object.keys(r.metafile?.inputs ?? {}));
  const copied = ['sql.js', '@vscode/codicons', 'ctrlc-windows'].flatMap((name) => {
    try {
      return [path.dirname(require.resolve(`${name}/package.json`))];
    } catch {
      return []; // not installed: copyCtrlCHelper said so
    }
  });
  writeFileSync('dist/THIRD-PARTY-NOTICES.txt', thirdPartyNotices([...packageDirsOfInputs(inputs, process.cwd()), ...copied]));
}

copyWasm();
copyCodicons();
copyCtrlCHelper();
if (watch) {
  const reporter = watchReporter(builds.length);
  const contexts = await Promise.all(builds.map((b) => esbuild.context({ ...b, plugins: [...(b.plugins ?? []), reporter] })));
  await Promise.all(contexts.map((c) => c.watch()));
} else {
  const results = await Promise.all(builds.map((b) => esbuild.build({ ...b, metafile: true })));
  writeNotices(results.filter((_, i) => !builds[i].outdir?.startsWith('dist/test')));
}
