// The layer diagram of docs/architecture.md#layers against the real import graph of src/ and
// webview/ (read as architecture-layers.test.ts reads it). Each node of the diagram names a folder
// by the first line of its label ("store/", "extension.ts"); `agent/` is one node for its rooms. A
// solid arrow `a --> b` says a file of a's folder imports one of b's; a dotted arrow (`-.->`) is a
// message between processes, not an import, and is not checked. Every import between two folders
// is an arrow, and every arrow is an import, except that arrows into `core/`, `protocol/` and
// `files/` may be left out (every layer may use them, as the text says); drawn, they must be real.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { OPEN_TO_ALL, importGraph, layerOf } from './architecture-layers.test';

const ROOT = path.resolve(__dirname, '../..');

export interface Diagram {
  /** Node id -> the folder its label names. */
  nodes: Map<string, string>;
  /** Solid arrows as `from --> to`, in folders. */
  arrows: Set<string>;
}

/** The mermaid flowchart under the heading `## Layers` of a Markdown text. */
export function layersDiagramOf(markdown: string): string {
  const section = markdown.split(/^## /m).find((part) => part.startsWith('Layers\n'));
  const block = section?.match(/```mermaid\n([\s\S]*?)```/);
  if (!block) throw new Error('no mermaid block under "## Layers"');
  return block[1]!;
}

/** Nodes and solid arrows of a mermaid flowchart whose node labels start with a folder name. */
export function parseDiagram(mermaid: string): Diagram {
  const nodes = new Map<string, string>();
  const edges: [string, string][] = [];
  for (const raw of mermaid.split('\n')) {
    const line = raw.replace(/([\w.-]+)\["([^"]*)"\]/g, (_whole, id: string, label: string) => {
      nodes.set(id, label.split('<br/>')[0]!.trim().replace(/\/$/, ''));
      return id;
    });
    const edge = line.match(/^\s*([\w.-]+)\s*(-->|-\.->)\s*(?:\|[^|]*\|\s*)?([\w.-]+)\s*$/);
    if (edge && edge[2] === '-->') edges.push([edge[1]!, edge[3]!]);
  }
  const folderOf = (id: string): string => {
    const folder = nodes.get(id);
    if (folder === undefined) throw new Error(`the diagram's node ${id} has no label naming its folder`);
    return folder;
  };
  return { nodes, arrows: new Set(edges.map(([from, to]) => `${folderOf(from)} --> ${folderOf(to)}`)) };
}

/** Folder of a file as the diagram draws it: `agent/`'s rooms are one node. */
export function diagramFolderOf(file: string): string {
  return layerOf(file).replace(/^agent\/.*$/, 'agent');
}

/** The arrows the import graph makes, each with one import that makes it (for the message). */
export function importArrows(graph: ReadonlyMap<string, readonly string[]>): Map<string, string> {
  const arrows = new Map<string, string>();
  for (const [file, targets] of graph) {
    for (const target of targets) {
      const from = diagramFolderOf(file);
      const to = diagramFolderOf(target);
      const arrow = `${from} --> ${to}`;
      if (from !== to && !arrows.has(arrow)) arrows.set(arrow, `${file} imports ${target}`);
    }
  }
  return arrows;
}

/** What to change in the diagram, one line each (empty: it matches). */
export function diagramDrift(
  diagram: Diagram,
  real: ReadonlyMap<string, string>,
  folders: ReadonlySet<string>,
  open: readonly string[],
): string[] {
  const idOf = (folder: string): string => [...diagram.nodes].find(([, f]) => f === folder)?.[0] ?? folder;
  const drawn = (arrow: string): string => {
    const [from, to] = arrow.split(' --> ') as [string, string];
    return `${idOf(from)} --> ${idOf(to)}`;
  };
  const drift: string[] = [];
  const named = new Set(diagram.nodes.values());
  for (const folder of [...folders].sort())
    if (!named.has(folder)) drift.push(`add a node for ${folder} (its label starting "${folder}/")`);
  for (const [id, folder] of diagram.nodes) if (!folders.has(folder)) drift.push(`remove the node ${id}: there is no ${folder} under src/`);
  for (const [arrow, example] of [...real].sort(([a], [b]) => a.localeCompare(b))) {
    const to = arrow.split(' --> ')[1]!;
    if (!open.includes(to) && !diagram.arrows.has(arrow)) drift.push(`add the arrow \`${drawn(arrow)}\` (${example})`);
  }
  for (const arrow of [...diagram.arrows].sort()) {
    if (!real.has(arrow))
      drift.push(`remove the arrow \`${drawn(arrow)}\` (no file of ${arrow.split(' --> ')[0]} imports ${arrow.split(' --> ')[1]})`);
  }
  return drift;
}

describe('architecture: the layer diagram draws the real imports (docs/architecture.md#layers)', () => {
  it('every folder is a node, every import between folders an arrow, every arrow an import', () => {
    const graph = importGraph();
    const folders = new Set([...graph.keys()].map(diagramFolderOf));
    const diagram = parseDiagram(layersDiagramOf(fs.readFileSync(path.join(ROOT, 'docs/architecture.md'), 'utf8')));
    assert.ok(diagram.arrows.size > 10, `only ${diagram.arrows.size} arrows read from the diagram`);
    const drift = diagramDrift(diagram, importArrows(graph), folders, OPEN_TO_ALL);
    assert.deepEqual(drift, [], `docs/architecture.md#layers, the diagram:\n  ${drift.join('\n  ')}`);
  });

  it('the check catches a missing node, a missing arrow, a made-up arrow and a reversed one (a fake diagram)', () => {
    const fake = [
      '```mermaid',
      'flowchart TD',
      '  ext["extension.ts<br/>root"] --> panel["panel/<br/>host side"]',
      '  web["webview/"] -.->|"postMessage"| panel',
      '  panel --> store["store/"]',
      '  ext --> store',
      '  core["core/"] --> protocol["protocol/"]',
      '```',
    ].join('\n');
    const diagram = parseDiagram(layersDiagramOf(`# Doc\n\n## Layers\n\nText.\n\n${fake}\n\n## Next\n`));
    assert.deepEqual(
      [...diagram.nodes],
      [
        ['ext', 'extension.ts'],
        ['panel', 'panel'],
        ['web', 'webview'],
        ['store', 'store'],
        ['core', 'core'],
        ['protocol', 'protocol'],
      ],
    );
    const graph = new Map<string, string[]>([
      ['src/extension.ts', ['src/panel/a.ts', 'src/personal/b.ts']],
      ['src/panel/a.ts', ['src/store/c.ts', 'src/core/d.ts', 'src/agent/runtime/e.ts']],
      ['src/agent/runtime/e.ts', ['src/agent/proxy/f.ts']],
      ['src/personal/b.ts', []],
      ['src/store/c.ts', ['src/core/d.ts']],
      ['src/core/d.ts', []],
      ['src/protocol/g.ts', ['src/core/d.ts']],
      ['webview/h.tsx', ['src/protocol/g.ts']],
    ]);
    const folders = new Set([...graph.keys()].map(diagramFolderOf));
    assert.deepEqual(diagramDrift(diagram, importArrows(graph), folders, OPEN_TO_ALL), [
      'add a node for agent (its label starting "agent/")',
      'add a node for personal (its label starting "personal/")',
      'add the arrow `ext --> personal` (src/extension.ts imports src/personal/b.ts)',
      'add the arrow `panel --> agent` (src/panel/a.ts imports src/agent/runtime/e.ts)',
      'remove the arrow `core --> protocol` (no file of core imports protocol)',
      'remove the arrow `ext --> store` (no file of extension.ts imports store)',
    ]);
  });
});
