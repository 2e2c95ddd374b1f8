// What a .vsix holds, and the rule for what it may hold: only what the installed extension runs
// (the bundles, sql.js's wasm, ctrlc-windows' Ctrl+C helper, media) plus the manifest, the notices
// of the third-party code in them and the documents the Marketplace shows. `npm run package`
// prints the list and fails on a breach; .vscodeignore is how vsce is told.
import * as yauzl from 'yauzl';

export interface VsixEntry {
  /** Path inside the zip, e.g. `extension/dist/extension.js`. */
  path: string;
  bytes: number;
}

export function readVsixEntries(file: string): Promise<VsixEntry[]> {
  return new Promise((resolve, reject) => {
    yauzl.open(file, { lazyEntries: true, autoClose: true }, (err, zip) => {
      if (err || !zip) return reject(err ?? new Error(`cannot open ${file}`));
      const entries: VsixEntry[] = [];
      zip.on('entry', (entry: yauzl.Entry) => {
        if (!entry.fileName.endsWith('/')) entries.push({ path: entry.fileName, bytes: entry.uncompressedSize });
        zip.readEntry();
      });
      zip.once('end', () => resolve(entries));
      zip.once('error', reject);
      zip.readEntry();
    });
  });
}

/** Files the extension cannot work without (vsce renames README, CHANGELOG and LICENSE). */
export const REQUIRED_VSIX_FILES = [
  'extension.vsixmanifest',
  'extension/package.json',
  'extension/readme.md',
  'extension/changelog.md',
  'extension/LICENSE.txt',
  'extension/dist/extension.js',
  // Its lazy bundles, required on first use (scripts/host-bundles.mjs).
  'extension/dist/engine.js',
  'extension/dist/personal.js',
  'extension/dist/runtime.js',
  'extension/dist/forge.js',
  'extension/dist/prices.js',
  'extension/dist/webview/main.js',
  'extension/dist/gateway.js',
  'extension/dist/reference-agent.js',
  'extension/dist/permission-mcp.js',
  'extension/dist/sql-wasm.wasm',
  // The notices and licenses of the third-party code shipped (scripts/third-party-notices.mjs).
  'extension/dist/THIRD-PARTY-NOTICES.txt',
  // The graceful stop's Ctrl+C on Windows (src/core/process-control.ts), x64 and arm64.
  'extension/dist/ctrlc-windows/x64/process-killer.exe',
  'extension/dist/ctrlc-windows/arm64/process-killer.exe',
  'extension/media/icon.png',
] as const;

/** Everything that may ship: the required files and what runs beside them. */
const ALLOWED: RegExp[] = [
  /^\[Content_Types\]\.xml$/,
  /^extension\.vsixmanifest$/,
  /^extension\/(package\.json|readme\.md|changelog\.md|LICENSE\.txt)$/,
  /^extension\/dist\/[^/]+\.js$/,
  /^extension\/dist\/sql-wasm\.wasm$/,
  /^extension\/dist\/THIRD-PARTY-NOTICES\.txt$/,
  /^extension\/dist\/ctrlc-windows\/(x64|arm64)\/process-killer\.exe$/,
  /^extension\/dist\/webview\/[^/]+\.(js|css|ttf)$/,
  /^extension\/media\/[^/]+\.(png|svg|css)$/,
  // The first-run walkthrough's step texts (docs/flows.md#first-run).
  /^extension\/media\/walkthrough\/[^/]+\.md$/,
];

/** Why a file outside the allowed set must not ship, for the most likely mistakes. */
const REASONS: [RegExp, string][] = [
  [/\.map$/, 'a source map (kept in dist/, not shipped)'],
  [/^extension\/src\//, 'TypeScript source (the bundles hold the code)'],
  [/^extension\/(test|dist\/test)\//, 'tests'],
  [/(^|\/)node_modules\//, 'node_modules (every dependency is bundled)'],
  [/^extension\/\.tools\//, 'the local VS Code / Node 24 tool cache'],
  [/^extension\/\.vscode(-test)?\//, 'editor or test-download state'],
];

/**
 * Size budget of the bundles a user's VS Code loads (minified, bytes): the extension host parses
 * extension.js on every start before activate(), engine.js right after it (the engine starts in
 * the background), personal.js in personal mode, runtime.js when a task first starts (or its
 * terminal is first shown), and the panel loads main.js each time it opens. A few per cent above
 * today's sizes, so an accidental heavy import (e.g. zod's classic build, ~190 kB, or its locales,
 * ~260 kB) fails the package; a budget is lowered when a bundle shrinks, never raised.
 * extension.js held everything (~783 kB) until the engine, the panel and personal mode's authority
 * moved to lazy bundles; zod/mini instead of zod's classic build, and the agent's start moved to
 * runtime.js, took engine.js from ~651 kB to ~446 kB and main.js from ~388 kB to ~224 kB; review's
 * reads and the task terminal's feed, loaded on first use, took extension.js from ~90 kB to ~77 kB
 * (docs/architecture.md#lazy-bundles).
 */
export const BUNDLE_BUDGET_BYTES: Readonly<Record<string, number>> = {
  'extension/dist/extension.js': 82 * 1024,
  'extension/dist/engine.js': 480 * 1024,
  'extension/dist/personal.js': 104 * 1024,
  'extension/dist/runtime.js': 80 * 1024,
  'extension/dist/forge.js': 132 * 1024,
  'extension/dist/prices.js': 512 * 1024,
  'extension/dist/webview/main.js': 240 * 1024,
};

/**
 * What the extension host parses before the panel's first paint with the tasks in it: activation's
 * bundle and the engine's, which the panel's data comes from (team mode; personal mode adds
 * personal.js). Their budget together, a few per cent above today's ~565 kB (~523 kB before the
 * pull requests' following and review follow-ups joined engine.js, ~741 kB before zod/mini and
 * runtime.js). The aim is 400 kB (issue 40), which needs the engine's start split in
 * two: what the panel reads now, the rest after its first paint (docs/architecture.md#lazy-bundles).
 */
export const FIRST_PAINT_BUNDLES = ['extension/dist/extension.js', 'extension/dist/engine.js'] as const;
export const FIRST_PAINT_BUDGET_BYTES = 560 * 1024;

/** Every breach of the rule, as readable lines; empty when the .vsix is right. */
export function checkVsixEntries(entries: readonly VsixEntry[]): string[] {
  const problems: string[] = [];
  const present = new Set(entries.map((e) => e.path));
  for (const file of REQUIRED_VSIX_FILES) if (!present.has(file)) problems.push(`missing: ${file}`);
  for (const { path, bytes } of entries) {
    const budget = BUNDLE_BUDGET_BYTES[path];
    if (budget !== undefined && bytes > budget) problems.push(`over budget: ${path} is ${bytes} bytes, the budget is ${budget}`);
    if (ALLOWED.some((re) => re.test(path))) continue;
    const reason = REASONS.find(([re]) => re.test(path))?.[1] ?? 'not something the installed extension uses';
    problems.push(`must not ship: ${path} (${reason})`);
  }
  const firstPaint = entries
    .filter((e) => (FIRST_PAINT_BUNDLES as readonly string[]).includes(e.path))
    .reduce((sum, e) => sum + e.bytes, 0);
  if (firstPaint > FIRST_PAINT_BUDGET_BYTES) {
    const names = FIRST_PAINT_BUNDLES.map((p) => p.slice(p.lastIndexOf('/') + 1)).join(', ');
    problems.push(`over budget: the first paint's bundles (${names}) are ${firstPaint} bytes, the budget is ${FIRST_PAINT_BUDGET_BYTES}`);
  }
  return problems;
}

/** The list as printed after packaging: size, then path, sorted by path. */
export function formatVsixEntries(entries: readonly VsixEntry[]): string {
  const total = entries.reduce((sum, e) => sum + e.bytes, 0);
  const lines = [...entries].sort((a, b) => a.path.localeCompare(b.path)).map((e) => `${String(e.bytes).padStart(10)}  ${e.path}`);
  return [...lines, `${String(total).padStart(10)}  (${entries.length} files, uncompressed)`].join('\n');
}
