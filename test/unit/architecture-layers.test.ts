// The layer order of docs/architecture.md#layers, checked on the real import graph of src/ and
// webview/: every import between folders goes down the table below, and no file imports itself
// back through any chain (type-only imports count too: a cycle of types is still a knot to read).
// vscode/ writes nothing to the task DB: it acts through the service (docs/architecture.md#who-writes-what).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');

/**
 * Which folders each folder may import (besides itself). `core/`, `protocol/` and `files/` are open
 * to every layer but each other's order: `protocol/` uses `core/`, `core/` and `files/` use nothing.
 */
const MAY_IMPORT: Record<string, readonly string[]> = {
  core: [],
  files: [],
  protocol: ['core'],
  store: [],
  'gateway-client': [],
  gateway: [],
  'reference-agent': [],
  'permission-mcp': [],
  scheduler: ['store'],
  service: ['gateway-client', 'agent/workplace', 'store'],
  'agent/questions': ['store'],
  'agent/proxy': ['store'],
  'agent/workplace': ['store'],
  'agent/runtime': ['agent/proxy', 'agent/questions', 'agent/workplace', 'scheduler', 'store'],
  personal: ['gateway', 'store'],
  notify: ['gateway', 'store'],
  engine: [
    'notify',
    'agent/runtime',
    'agent/proxy',
    'agent/questions',
    'agent/workplace',
    'scheduler',
    'service',
    'store',
    'gateway-client',
  ],
  // The panel maps requests to the service and rows to views: it acts through service/ only, and
  // never reaches the runtime, the worktrees or the engine itself.
  panel: ['service', 'store', 'gateway-client'],
  vscode: [
    'notify',
    'panel',
    'engine',
    'personal',
    'agent/runtime',
    'agent/proxy',
    'agent/questions',
    'agent/workplace',
    'service',
    'store',
    'gateway-client',
  ],
  'extension.ts': ['notify', 'vscode', 'panel', 'engine', 'personal', 'service', 'store'],
  // The webview is bundled for the browser: it takes the shared wording of the morning summary and
  // nothing else of the host side.
  webview: [],
};
/** Folders every layer may import, left out of the diagram's arrows. */
export const OPEN_TO_ALL = ['core', 'protocol', 'files'];

/**
 * Where a file could write the task DB: an import of store/ that is not `import type` (static or
 * dynamic), or a `.mutate(` call. vscode/ acts through the service; it reads the store at most.
 */
export function storeWritesIn(file: string, text: string): string[] {
  const wrong: string[] = [];
  const isStore = (spec: string) => spec.startsWith('.') && layerOf(path.posix.join(path.posix.dirname(file), spec)) === 'store';
  for (const match of text.matchAll(/\b(?:import|export)(\s+type\b)?[^;'"]*?\bfrom\s*['"]([^'"]+)['"]/g)) {
    if (isStore(match[2]!) && !match[1]) wrong.push(`${file}: ${match[0].replace(/\s+/g, ' ')} (store/ only with \`import type\`)`);
  }
  for (const match of text.matchAll(/\bimport\s*\(\s*['"]([^'"]+)['"]/g)) {
    if (isStore(match[1]!)) wrong.push(`${file}: import('${match[1]}') (store/ only with \`import type\`)`);
  }
  if (/\.mutate\s*\(/.test(text)) wrong.push(`${file}: calls .mutate( (a write to the task DB)`);
  return wrong;
}
const WEBVIEW_MAY_IMPORT_FILES = ['src/panel/task-summary.ts'];

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const rel = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return sourceFiles(rel);
    return /\.tsx?$/.test(entry.name) ? [rel] : [];
  });
}

/** The folder (layer) of a repository-relative file: `agent/` counts by its sub-folder. */
export function layerOf(file: string): string {
  const parts = file.split('/');
  if (parts[0] === 'webview') return 'webview';
  if (parts.length === 2) return parts[1]!;
  if (parts[1] === 'agent') return `agent/${parts[2]}`;
  return parts[1]!;
}

function importsOf(file: string): string[] {
  const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
  const found: string[] = [];
  for (const match of text.matchAll(/(?:\bfrom|\bimport)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g)) {
    const base = path.join(path.dirname(file), match[1]!);
    const hit = [base, `${base}.ts`, `${base}.tsx`, `${base}/index.ts`].find((candidate) => {
      const abs = path.join(ROOT, candidate);
      return fs.existsSync(abs) && fs.statSync(abs).isFile();
    });
    if (hit) found.push(hit.split(path.sep).join('/'));
  }
  return found;
}

/** Every file of src/ and webview/ with the repository files it imports (relative imports only). */
export function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of [...sourceFiles('src'), ...sourceFiles('webview')]) graph.set(file, importsOf(file));
  return graph;
}

/** Strongly connected groups of more than one file, or a file importing itself (Tarjan). */
export function cyclesOf(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, next);
    low.set(node, next);
    next++;
    stack.push(node);
    onStack.add(node);
    for (const to of graph.get(node) ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node)!, low.get(to)!));
      } else if (onStack.has(to)) {
        low.set(node, Math.min(low.get(node)!, index.get(to)!));
      }
    }
    if (low.get(node) === index.get(node)) {
      const group: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        group.push(member);
      } while (member !== node);
      if (group.length > 1 || (graph.get(node) ?? []).includes(node)) cycles.push(group.sort());
    }
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return cycles;
}

describe('architecture: the layer order and no import cycles (docs/architecture.md#layers)', () => {
  const graph = importGraph();

  it('the import graph was read (src/ and webview/ have files and imports)', () => {
    assert.ok(graph.size > 100, `only ${graph.size} files read`);
    assert.ok([...graph.values()].some((targets) => targets.length > 0));
  });

  it('every folder under src/ has a place in the layer table', () => {
    for (const file of graph.keys()) {
      assert.ok(layerOf(file) in MAY_IMPORT, `${file}: its folder ${layerOf(file)} is not in the layer table`);
    }
  });

  it('imports between folders go down the layer table only', () => {
    const wrong: string[] = [];
    for (const [file, targets] of graph) {
      const from = layerOf(file);
      for (const target of targets) {
        const to = layerOf(target);
        if (to === from || MAY_IMPORT[from]!.includes(to)) continue;
        if (OPEN_TO_ALL.includes(to) && from !== 'core') continue;
        if (from === 'webview' && WEBVIEW_MAY_IMPORT_FILES.includes(target)) continue;
        wrong.push(`${file} → ${target} (${from} may not import ${to})`);
      }
    }
    assert.deepEqual(wrong, []);
  });

  it('vscode/ never writes the task DB: store/ only through `import type`, no `.mutate(`', () => {
    const files = [...graph.keys()].filter((file) => layerOf(file) === 'vscode');
    assert.ok(files.length > 5, `only ${files.length} vscode/ files read`);
    assert.deepEqual(
      files.flatMap((file) => storeWritesIn(file, fs.readFileSync(path.join(ROOT, file), 'utf8'))),
      [],
    );
  });

  it('the store-write check catches a value import of store/, a dynamic one and a mutate call, and lets a type import pass', () => {
    const file = 'src/vscode/example.ts';
    assert.deepEqual(
      storeWritesIn(file, "import type { TaskRecord } from '../store';\nexport type { ScheduleRecord } from '../store';\n"),
      [],
    );
    assert.equal(storeWritesIn(file, "import { TaskStore } from '../store';\n").length, 1);
    assert.equal(storeWritesIn(file, "import {\n  type TaskRecord,\n  changeConcerns,\n} from '../store/index';\n").length, 1);
    assert.equal(storeWritesIn(file, "const { TaskStore } = await import('../store');\n").length, 1);
    assert.equal(storeWritesIn(file, 'await engine.store.mutate((tx) => tx.outcomes.markSeen(ids));\n').length, 1);
    // Another layer's store is not this check's business.
    assert.deepEqual(storeWritesIn(file, "import { x } from '../gateway/stores/store';\n"), []);
  });

  it('no import cycle anywhere in src/ or webview/, the gateway included', () => {
    assert.deepEqual(cyclesOf(graph), []);
  });

  it('the cycle finder finds a cycle (a two-file knot and a self-import)', () => {
    assert.deepEqual(
      cyclesOf(
        new Map([
          ['a', ['b']],
          ['b', ['a']],
          ['c', []],
        ]),
      ),
      [['a', 'b']],
    );
    assert.deepEqual(cyclesOf(new Map([['a', ['a']]])), [['a']]);
  });

  it('the layer table has no cycle of its own', () => {
    assert.deepEqual(cyclesOf(new Map(Object.entries(MAY_IMPORT).map(([from, to]) => [from, [...to]]))), []);
  });
});
