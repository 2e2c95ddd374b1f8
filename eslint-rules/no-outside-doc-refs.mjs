// ESLint rule: comments and mocha test titles may point only at documents in this repository.
// Flags "seed NN" / "branch NN" section numbers and "DESIGN §N" / DESIGN.md (design notes kept
// outside the repository), paths into ../shared, and any relative path to a .md file that does
// not exist (or a #anchor that is not one of its headings). See docs/architecture.md#conventions.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Citations of documents that are not in the repository, whatever the wording around them. */
const OUTSIDE_REFS = [
  { pattern: /\bseed(?:'s)?\s+(?:section\s+)?\d{1,2}\b/i, what: 'a "seed NN" section' },
  { pattern: /\bthe seed\b|\bseed's\b/i, what: 'the seed document' },
  { pattern: /\bbranch(?:es)?\s+\d{2}\b/i, what: 'a "branch NN" of the seed document' },
  { pattern: /\bDESIGN\s*§/, what: 'a DESIGN § section' },
  { pattern: /\bDESIGN\.md\b/, what: 'DESIGN.md' },
  { pattern: /(?:\.\.\/|\/work\/)shared\b|\bshared\/reference\b/, what: 'a file under ../shared' },
];

/** A relative path to a Markdown file, optionally with an anchor: docs/flows.md#cancel, ../README.md, README.md#quick-start. */
const MD_PATH = /(?<![\w/.-])((?:\.{1,2}\/|[\w-]+\/)[\w./-]*?[\w-]+\.md|README\.md(?=#))(#[\w-]+)?/g;

const MOCHA_TITLES = new Set(['describe', 'context', 'it', 'specify', 'suite', 'test']);

const anchorCache = new Map();

/** GitHub's heading anchors of a Markdown file (lowercase, punctuation dropped, spaces to hyphens, -1 -2 for repeats). */
export function markdownAnchors(file) {
  if (anchorCache.has(file)) return anchorCache.get(file);
  const anchors = new Set();
  const seen = new Map();
  let fenced = false;
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    const heading = !fenced && /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const base = heading[1]
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .trim()
      .replace(/\s/g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  anchorCache.set(file, anchors);
  return anchors;
}

function resolveMarkdown(relative, fromFile, root) {
  const candidates = [path.resolve(path.dirname(fromFile), relative), path.resolve(root, relative)];
  return candidates.find((c) => c.startsWith(root + path.sep) && fs.existsSync(c) && fs.statSync(c).isFile());
}

/** Problems in one piece of text (a comment or a test title). */
export function findOutsideRefs(text, fromFile, root = REPO_ROOT) {
  const problems = [];
  for (const { pattern, what } of OUTSIDE_REFS) {
    const m = pattern.exec(text);
    if (m)
      problems.push(`"${m[0]}" cites ${what}, which is not in this repository: point at docs/ (e.g. docs/flows.md#create) or say it here`);
  }
  for (const m of text.matchAll(MD_PATH)) {
    const [, relative, anchor] = m;
    if (/^https?:/.test(text.slice(Math.max(0, m.index - 8), m.index))) continue;
    const file = resolveMarkdown(relative, fromFile, root);
    if (!file) problems.push(`"${relative}" is not a file in this repository`);
    else if (anchor && !markdownAnchors(file).has(anchor.slice(1)))
      problems.push(`"${relative}${anchor}": ${relative} has no heading with that anchor`);
  }
  return problems;
}

function titleText(node) {
  if (node.type === 'Literal' && typeof node.value === 'string') return node.value;
  if (node.type === 'TemplateLiteral') return node.quasis.map((q) => q.value.cooked ?? q.value.raw).join('${}');
  return undefined;
}

function calleeName(callee) {
  if (callee.type === 'Identifier') return callee.name;
  if (callee.type === 'MemberExpression' && callee.object.type === 'Identifier') return callee.object.name; // it.only, describe.skip
  return undefined;
}

/** @type {import('eslint').Rule.RuleModule} */
export const noOutsideDocRefs = {
  meta: {
    type: 'problem',
    docs: { description: 'Comments and test titles cite only documents that are in this repository' },
    schema: [{ type: 'object', properties: { root: { type: 'string' } }, additionalProperties: false }],
    messages: { outside: '{{problem}}' },
  },
  create(context) {
    const root = context.options[0]?.root ?? REPO_ROOT;
    const file = context.filename;
    const report = (node, loc, text) => {
      for (const problem of findOutsideRefs(text, file, root)) context.report({ node, loc, messageId: 'outside', data: { problem } });
    };
    return {
      Program() {
        for (const comment of context.sourceCode.getAllComments()) report(undefined, comment.loc, comment.value);
      },
      CallExpression(node) {
        const name = calleeName(node.callee);
        if (!name || !MOCHA_TITLES.has(name) || node.arguments.length === 0) return;
        const text = titleText(node.arguments[0]);
        if (text !== undefined) report(node.arguments[0], undefined, text);
      },
    };
  },
};

export default { meta: { name: 'offpeak-local' }, rules: { 'no-outside-doc-refs': noOutsideDocRefs } };
