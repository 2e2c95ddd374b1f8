// The notices of the third-party code the .vsix ships (dist/THIRD-PARTY-NOTICES.txt): every npm
// package with a file in a shipped bundle (from esbuild's metafile), and the files copied beside
// them (sql.js's wasm, the codicon font, ctrlc-windows' helper). Their licenses (MIT, ISC, Apache
// 2.0…) ask for their notice to travel with copies. Written by esbuild.mjs on every full build.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** The packages (their directories) whose files are among a build's inputs; a nested one by its own folder. */
export function packageDirsOfInputs(inputs, root) {
  const dirs = new Set();
  for (const input of inputs) {
    const unix = input.replace(/\\/g, '/');
    const matches = [...unix.matchAll(/node_modules\/((?:@[^/]+\/)?[^/]+)\//g)];
    const last = matches.at(-1);
    if (!last) continue;
    dirs.add(path.resolve(root, unix.slice(0, last.index + 'node_modules/'.length + last[1].length)));
  }
  return [...dirs];
}

/** One package's notice: name, version, license, where it comes from, and its license text. */
export function noticeOf(dir) {
  const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8'));
  const license = typeof pkg.license === 'string' ? pkg.license : (pkg.license?.type ?? 'no license field');
  const author = typeof pkg.author === 'string' ? pkg.author : pkg.author?.name;
  const file = readdirSync(dir).find((name) => /^(licen[cs]e|copying)([.-].*)?$/i.test(name));
  const text = file
    ? readFileSync(path.join(dir, file), 'utf8').trim()
    : `The package ships no license text. Its package.json says: license ${license}${author ? `, author ${author}` : ''}.`;
  const from =
    pkg.homepage ??
    (typeof pkg.repository === 'string' ? pkg.repository : pkg.repository?.url) ??
    `https://www.npmjs.com/package/${pkg.name}`;
  return { name: pkg.name, text: `${pkg.name} ${pkg.version} (${license})\n${from}\n\n${text}\n` };
}

/** The whole file: a header, then each package once, by name. */
export function thirdPartyNotices(dirs) {
  const byName = new Map();
  for (const dir of dirs) {
    const notice = noticeOf(dir);
    if (!byName.has(notice.name)) byName.set(notice.name, notice.text);
  }
  const names = [...byName.keys()].sort();
  const header = `Off-Peak Tasks ships code of these ${names.length} packages (bundled into dist/, or copied beside it).\nTheir notices and licenses follow.\n`;
  return [header, ...names.map((name) => byName.get(name))].join(`\n${'='.repeat(78)}\n\n`);
}
