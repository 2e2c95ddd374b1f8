// The "Who writes what" table of docs/architecture.md#who-writes-what against the code: it has a
// row for every table of the task DB, and each row names, as a file (`service/task-lifecycle.ts`),
// every module outside src/store/ that writes the table.
//
// How "module M writes table T" is found, from the sources alone:
// - the tables: every `off_peak_*` table a `CREATE TABLE` under src/store/ makes and no later
//   `DROP TABLE` removes (names written as constants are resolved through their `const X = '…'`);
// - a repository's tables: those its own file writes with `INSERT`, `UPDATE` or `DELETE` (the rows
//   a task's delete takes with it, named through a variable, are not counted);
// - a repository's write methods: `StoreTx` (src/store/store-types.ts) hangs one repository off
//   `tx` per key, and `StoreReadTx` picks each one's read methods; every other method writes;
// - a write: a call `tx.<repo>.<method>(` of a write method in a file outside src/store/ (every
//   repository call there goes through a `tx`; a write method exists only on a mutation's `tx`).
// The history archive's repository moves whole tasks, every per-task table at once: its writers are
// named in the row of the archive file (`tasks-archive.sqlite`) instead.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');
/** Tables not of one repository, matched to a row by its "where" cell. */
const ROW_OF_REPO: Record<string, string> = { archive: 'tasks-archive.sqlite' };

function filesUnder(dir: string): string[] {
  return fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const rel = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return filesUnder(rel);
    return /\.tsx?$/.test(entry.name) ? [rel] : [];
  });
}

/** `CONST` -> `'off_peak_…'` for every such constant of the texts. */
function tableConstants(texts: Iterable<string>): Map<string, string> {
  const constants = new Map<string, string>();
  for (const text of texts) for (const m of text.matchAll(/\bconst (\w+) = '(off_peak_\w+)'/g)) constants.set(m[1]!, m[2]!);
  return constants;
}

/** The table names after `pattern` (a literal `off_peak_x` or `${CONST}`), resolved; unresolved ones left out. */
function tablesAfter(text: string, pattern: string, constants: ReadonlyMap<string, string>): string[] {
  const found: string[] = [];
  for (const m of text.matchAll(new RegExp(`${pattern}\\s+(?:(off_peak_\\w+)|\\$\\{(\\w+)\\})`, 'g'))) {
    const table = m[1] ?? constants.get(m[2]!);
    if (table) found.push(table);
  }
  return found;
}

/** The tables of the task DB: created under src/store/ and not dropped since. */
export function taskDbTables(storeSources: ReadonlyMap<string, string>): string[] {
  const constants = tableConstants(storeSources.values());
  const created = new Set<string>();
  const dropped = new Set<string>();
  for (const text of storeSources.values()) {
    for (const table of tablesAfter(text, 'CREATE TABLE IF NOT EXISTS', constants)) created.add(table);
    for (const table of tablesAfter(text, 'DROP TABLE IF EXISTS', constants)) dropped.add(table);
  }
  return [...created].filter((table) => !dropped.has(table)).sort();
}

export interface RepoMap {
  /** `tx` key -> the tables its repository writes. */
  tables: Map<string, string[]>;
  /** `tx` key -> its read methods (every other one writes). */
  reads: Map<string, Set<string>>;
}

/** The repositories hanging off `tx`, from store-types.ts and the repositories' own files. */
export function repoMap(storeSources: ReadonlyMap<string, string>): RepoMap {
  const types = storeSources.get('src/store/store-types.ts')!;
  const constants = tableConstants(storeSources.values());
  const fileOfType = new Map(
    [...types.matchAll(/import type \{ (\w+) \} from '\.\/([\w/-]+)'/g)].map((m) => [m[1]!, `src/store/${m[2]}.ts`]),
  );
  const body = (name: string): string => types.match(new RegExp(`export interface ${name} \\{([\\s\\S]*?)\\n\\}`))![1]!;
  const tables = new Map<string, string[]>();
  for (const m of body('StoreTx').matchAll(/readonly (\w+): (\w+);/g)) {
    const file = fileOfType.get(m[2]!);
    if (!file) continue;
    const text = storeSources.get(file) ?? '';
    const written = ['INSERT(?: OR \\w+)? INTO', 'UPDATE', 'DELETE FROM'].flatMap((verb) => tablesAfter(text, verb, constants));
    tables.set(m[1]!, [...new Set(written)].sort());
  }
  const reads = new Map<string, Set<string>>();
  for (const m of body('StoreReadTx').matchAll(/readonly (\w+): Pick<\s*\w+,\s*([^>]*)>/g)) {
    reads.set(m[1]!, new Set([...m[2]!.matchAll(/'(\w+)'/g)].map((name) => name[1]!)));
  }
  return { tables, reads };
}

/** Table (or `ROW_OF_REPO` file) -> writer module (relative to src/) -> one call that writes it. */
export function writersOf(sources: ReadonlyMap<string, string>, repos: RepoMap): Map<string, Map<string, string>> {
  const writers = new Map<string, Map<string, string>>();
  for (const [file, text] of sources) {
    for (const m of text.matchAll(/\btx\.(\w+)\.(\w+)\(/g)) {
      const [call, repo, method] = [m[0].slice(0, -1), m[1]!, m[2]!];
      if (!repos.reads.has(repo) || repos.reads.get(repo)!.has(method)) continue;
      for (const table of ROW_OF_REPO[repo] ? [ROW_OF_REPO[repo]] : (repos.tables.get(repo) ?? [])) {
        const byFile = writers.get(table) ?? new Map<string, string>();
        const module = file.replace(/^src\//, '');
        if (!byFile.has(module)) byFile.set(module, call);
        writers.set(table, byFile);
      }
    }
  }
  return writers;
}

export interface WhoRow {
  what: string;
  where: string;
  by: string;
}

/** The rows of the table under "## Who writes what". */
export function whoWritesRows(markdown: string): WhoRow[] {
  const section = markdown.split(/^##+ /m).find((part) => part.startsWith('Who writes what\n'));
  if (!section) throw new Error('no "## Who writes what" section');
  return section
    .split('\n')
    .filter((line) => line.startsWith('| ') && !line.startsWith('| what |') && !line.startsWith('| ---'))
    .map((line) => {
      const [what, where, by] = line.slice(2, -2).split(' | ');
      return { what: what ?? '', where: where ?? '', by: by ?? '' };
    });
}

/** What the table misses, one line each (empty: it names every table and every writer). */
export function tableDrift(
  rows: readonly WhoRow[],
  tables: readonly string[],
  writers: ReadonlyMap<string, ReadonlyMap<string, string>>,
): string[] {
  const drift: string[] = [];
  const rowsOf = (table: string): WhoRow[] => rows.filter((row) => row.what.includes(`\`${table}\``) || row.where.includes(`\`${table}\``));
  for (const table of [...new Set([...tables, ...writers.keys()])].sort()) {
    const named = rowsOf(table);
    if (named.length === 0) {
      drift.push(`add a row for \`${table}\` (its "what" cell naming it in backticks)`);
      continue;
    }
    for (const [file, call] of [...(writers.get(table) ?? [])].sort(([a], [b]) => a.localeCompare(b))) {
      if (!named.some((row) => row.by.includes(`\`${file}\``)))
        drift.push(`name \`${file}\` in the "written by" cell of \`${table}\`'s row (it calls ${call})`);
    }
  }
  return drift;
}

function sourcesOf(files: readonly string[]): Map<string, string> {
  return new Map(files.map((file) => [file, fs.readFileSync(path.join(ROOT, file), 'utf8')]));
}

describe('architecture: "Who writes what" names every table and its writers (docs/architecture.md#who-writes-what)', () => {
  const store = sourcesOf(filesUnder('src/store'));
  const repos = repoMap(store);

  it('the store was read: its tables, repositories, their tables and read methods', () => {
    const tables = taskDbTables(store);
    for (const table of ['off_peak_tasks', 'off_peak_tickets', 'off_peak_notify_outbox', 'off_peak_schedule_runs'])
      assert.ok(tables.includes(table), table);
    assert.ok(!tables.includes('off_peak_leases'), 'a dropped table is not a table');
    assert.deepEqual(repos.tables.get('tickets'), ['off_peak_tickets']);
    assert.deepEqual(repos.tables.get('windows'), ['off_peak_dispatch_requests', 'off_peak_windows']);
    assert.ok(repos.reads.get('tasks')?.has('get') && !repos.reads.get('tasks')?.has('insert'));
    for (const key of repos.tables.keys()) assert.ok(repos.reads.has(key), `StoreReadTx has no ${key}`);
  });

  it('every table of the task DB has a row, and each row names every module outside src/store/ that writes it', () => {
    const sources = sourcesOf(filesUnder('src').filter((file) => !file.startsWith('src/store/')));
    const writers = writersOf(sources, repos);
    assert.ok((writers.get('off_peak_tasks')?.size ?? 0) > 2, 'the writers of off_peak_tasks were not found');
    const rows = whoWritesRows(fs.readFileSync(path.join(ROOT, 'docs/architecture.md'), 'utf8'));
    const drift = tableDrift(rows, taskDbTables(store), writers);
    assert.deepEqual(drift, [], `docs/architecture.md#who-writes-what:\n  ${drift.join('\n  ')}`);
  });

  it('the check catches an unnamed writer and a table without a row (a fake table and sources)', () => {
    const markdown = [
      '## Who writes what',
      '',
      '| what | where | written by |',
      '| --- | --- | --- |',
      '| task rows (`off_peak_tasks`) | `tasks-index.sqlite` | `service/a.ts` |',
      '| the archive | `tasks-archive.sqlite` | `service/archive.ts` |',
      '',
      '### Next',
    ].join('\n');
    const fakeRepos: RepoMap = {
      tables: new Map([
        ['tasks', ['off_peak_tasks']],
        ['archive', []],
      ]),
      reads: new Map([
        ['tasks', new Set(['get'])],
        ['archive', new Set(['rowsOf'])],
      ]),
    };
    const sources = new Map([
      ['src/service/a.ts', 'store.mutate((tx) => tx.tasks.insert(row));'],
      ['src/panel/b.ts', 'store.read((tx) => tx.tasks.get(id)); store.mutate((tx) => tx.tasks.pause(id));'],
      ['src/panel/c.ts', 'store.read((tx) => tx.tasks.get(id)); tx.archive.rowsOf(ids);'],
      ['src/service/archive.ts', 'tx.archive.restore(id, rows);'],
    ]);
    const writers = writersOf(sources, fakeRepos);
    assert.deepEqual([...writers.keys()].sort(), ['off_peak_tasks', 'tasks-archive.sqlite']);
    assert.deepEqual(tableDrift(whoWritesRows(markdown), ['off_peak_notify_outbox', 'off_peak_tasks'], writers), [
      'add a row for `off_peak_notify_outbox` (its "what" cell naming it in backticks)',
      'name `panel/b.ts` in the "written by" cell of `off_peak_tasks`\'s row (it calls tx.tasks.pause)',
    ]);
  });
});
