// docs/architecture.md names files and folders in backticks; each one it names must exist, so the
// document cannot drift from the tree after a move (docs/architecture.md#layers). A name in a row
// of the layer table is looked up in that row's folder; a name elsewhere anywhere in the sources;
// a path with a slash from the repository root, from src/ or from the row's folder. Run-time files (`globalStorage/…`,
// the build's `dist/…`) are not source files and are left out.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');
const SOURCE_DIRS = ['src', 'webview', 'test', 'bench', 'scripts', 'eslint-rules', 'deploy'];
const SOURCE_FILE = /^[\w./*-]+\.(ts|tsx|mjs)$/;
const FOLDER = /^[\w./-]+\/$/;
const RUN_TIME = /^(globalStorage|dist)\//;

function filesUnder(dir: string): string[] {
  const abs = path.join(ROOT, dir);
  if (!fs.existsSync(abs)) return [];
  return fs.readdirSync(abs, { withFileTypes: true }).flatMap((entry) => {
    if (entry.name === 'node_modules' || entry.name.startsWith('.')) return [];
    const rel = `${dir}/${entry.name}`;
    return entry.isDirectory() ? [rel, ...filesUnder(rel)] : [rel];
  });
}

/** A name with `*` matches like a shell glob within one path segment. */
function matcher(name: string): RegExp {
  const escaped = name.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*');
  return new RegExp(`^${escaped}$`);
}

/** The folder a layer-table row is about (`agent/runtime/` → src/agent/runtime), or undefined. */
function rowFolder(line: string): string | undefined {
  const cell = /^\| `([\w/-]+)\/` \|/.exec(line)?.[1];
  if (!cell) return undefined;
  return cell === 'webview' ? 'webview' : `src/${cell}`;
}

/** Every backticked source file or folder of `markdown` that does not exist in `tree`. */
export function missingPaths(markdown: string, tree: readonly string[]): string[] {
  const existing = new Set(tree);
  const missing: string[] = [];
  for (const line of markdown.split('\n')) {
    const folder = rowFolder(line);
    for (const [, name] of line.matchAll(/`([^`\s<]+)`/g)) {
      if (RUN_TIME.test(name!) || !(SOURCE_FILE.test(name!) || FOLDER.test(name!))) continue;
      const bare = name!.replace(/\/$/, '');
      const candidates =
        bare.includes('/') || !SOURCE_FILE.test(name!)
          ? [bare, `src/${bare}`, `src/agent/${bare}`, ...(folder ? [`${folder}/${bare}`] : [])]
          : folder
            ? [`${folder}/${bare}`]
            : undefined;
      const found = candidates
        ? candidates.some((candidate) => [...existing].some((file) => matcher(candidate).test(file)))
        : [...existing].some((file) => matcher(bare).test(path.posix.basename(file)));
      if (!found) missing.push(folder ? `${name} (in the ${folder} row)` : name!);
    }
  }
  return missing;
}

/** The source files and folders of the repository, as `missingPaths` takes them. */
export function sourceTree(): string[] {
  return SOURCE_DIRS.flatMap((dir) => (fs.existsSync(path.join(ROOT, dir)) ? [dir, ...filesUnder(dir)] : []));
}

describe('docs/architecture.md names only files and folders that exist (docs/architecture.md#layers)', () => {
  const tree = sourceTree();
  const markdown = fs.readFileSync(path.join(ROOT, 'docs/architecture.md'), 'utf8');

  it('the document names many source files (the check reads them)', () => {
    const named = [...markdown.matchAll(/`([^`\s<]+\.(ts|tsx))`/g)];
    assert.ok(named.length > 80, `only ${named.length} file names found`);
  });

  it('every backticked source file and folder it names exists', () => {
    assert.deepEqual(missingPaths(markdown, tree), []);
  });

  it('the check finds a missing file, a file named in the wrong row, a missing folder and an empty glob', () => {
    const doc = [
      '| `store/` | the `task-store.ts` and `ticket-proxy.ts` (`archive/archive-*.ts`, `nothing-*.ts`) |',
      'Elsewhere `gone.ts`, `agent/proxy/ticket-proxy.ts`, `src/agent/nowhere/` and `agent/runtime/`;',
      'run-time files are not sources: `globalStorage/runtime/x.ts`, `dist/gateway.js`, `agent.log`.',
    ].join('\n');
    assert.deepEqual(missingPaths(doc, tree), [
      'ticket-proxy.ts (in the src/store row)',
      'nothing-*.ts (in the src/store row)',
      'gone.ts',
      'src/agent/nowhere/',
    ]);
  });
});
