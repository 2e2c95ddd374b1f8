import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { killSubtree, systemProcessHost } from '../core/process-control';
import type { ToolDefinition } from './messages-client';
import type { PermissionMode } from './events';
import { replaceKeepingLineEndings } from './line-endings';
import { shellInvocation } from './shell';

/** What a tool needs before it runs: nothing (reads), an edit permission, or a command permission. */
export type ToolRisk = 'read' | 'edit' | 'command';

export interface ToolResult {
  content: string;
  isError: boolean;
}

export interface ToolContext {
  workspace: string;
  signal: AbortSignal;
  /** Upper bound for run_command when the model gives none. */
  commandTimeoutMs: number;
}

interface Tool {
  definition: ToolDefinition;
  risk: ToolRisk;
  /** One line for the transcript and for permission prompts. */
  summarize(input: Record<string, unknown>): string;
  run(input: Record<string, unknown>, ctx: ToolContext): Promise<string>;
}

const MAX_OUTPUT_CHARS = 30_000;
const MAX_LIST_ENTRIES = 500;
const SKIPPED_DIRS = new Set(['.git', 'node_modules']);

export class ToolInputError extends Error {}

function str(input: Record<string, unknown>, key: string, required = true): string {
  const value = input[key];
  if (typeof value === 'string') return value;
  if (!required && value === undefined) return '';
  throw new ToolInputError(`"${key}" must be a string`);
}

function num(input: Record<string, unknown>, key: string): number | undefined {
  const value = input[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'number' && Number.isFinite(value) && value >= 0) return value;
  throw new ToolInputError(`"${key}" must be a non-negative number`);
}

/**
 * Resolves a model-given path inside the workspace. The path must stay inside it lexically, and
 * no existing component may be a symbolic link: a repository can ship `notes.txt -> ~/.ssh/...`
 * (even dangling), and following it would read or write outside the workspace without any check.
 */
export function resolveInWorkspace(workspace: string, given: string): string {
  const root = fs.realpathSync(workspace);
  const target = path.resolve(root, given || '.');
  const rel = path.relative(root, target);
  if (rel.startsWith('..') || path.isAbsolute(rel)) throw new ToolInputError(`path ${given} is outside the workspace`);
  let current = root;
  for (const part of rel.split(path.sep).filter(Boolean)) {
    current = path.join(current, part);
    const stat = fs.lstatSync(current, { throwIfNoEntry: false });
    if (!stat) break; // the rest does not exist yet (a file or directories to create)
    if (stat.isSymbolicLink())
      throw new ToolInputError(
        `path ${given} goes through a symbolic link (${path.relative(root, current)}); the agent does not follow links`,
      );
  }
  return target;
}

// O_NOFOLLOW closes the gap between the check above and the open (a link swapped in meanwhile).
const NOFOLLOW = fs.constants.O_NOFOLLOW ?? 0;

function readWorkspaceFile(file: string): string {
  const fd = fs.openSync(file, fs.constants.O_RDONLY | NOFOLLOW);
  try {
    return fs.readFileSync(fd, 'utf8');
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Writes a workspace file (creating its parents) without following links, then re-checks where it
 * landed. The content goes to a new file that then replaces the old one (rename), never into the
 * old file's inode: a hard link (`ln ~/.bashrc notes.txt`) shares its inode with a file outside
 * the workspace, which a write in place would change. The old file's permission bits are kept.
 */
function writeWorkspaceFile(workspace: string, given: string, file: string, content: string): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  // The directories just created are checked again: nothing may have become a link meanwhile.
  resolveInWorkspace(workspace, given);
  const existing = fs.lstatSync(file, { throwIfNoEntry: false });
  if (existing?.isDirectory()) throw new ToolInputError(`${given} is a directory`);
  const temp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}-${Date.now().toString(36)}.offpeak-tmp`);
  const fd = fs.openSync(temp, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | NOFOLLOW, 0o666);
  try {
    fs.writeFileSync(fd, content);
    if (existing) fs.fchmodSync(fd, existing.mode & 0o777);
    fs.closeSync(fd);
    fs.renameSync(temp, file);
  } catch (err) {
    fs.rmSync(temp, { force: true });
    throw err;
  }
  const real = fs.realpathSync(file);
  const rel = path.relative(fs.realpathSync(workspace), real);
  if (rel.startsWith('..') || path.isAbsolute(rel)) throw new ToolInputError(`path ${given} resolved outside the workspace after writing`);
}

function truncate(text: string): string {
  return text.length <= MAX_OUTPUT_CHARS
    ? text
    : text.slice(0, MAX_OUTPUT_CHARS) + `\n… [${text.length - MAX_OUTPUT_CHARS} more characters truncated]`;
}

const tools: Tool[] = [
  {
    risk: 'read',
    definition: {
      name: 'read_file',
      description: 'Read a text file in the workspace. Lines are numbered from 1. Use offset/limit (in lines) for large files.',
      input_schema: {
        type: 'object',
        properties: { path: { type: 'string' }, offset: { type: 'number' }, limit: { type: 'number' } },
        required: ['path'],
      },
    },
    summarize: (i) => `read ${String(i.path)}`,
    async run(input, ctx) {
      const file = resolveInWorkspace(ctx.workspace, str(input, 'path'));
      const lines = readWorkspaceFile(file).split('\n');
      const offset = Math.max(1, num(input, 'offset') ?? 1);
      const limit = num(input, 'limit') ?? 2000;
      const slice = lines.slice(offset - 1, offset - 1 + limit);
      return truncate(slice.map((l, i) => `${String(offset + i).padStart(6)}\t${l}`).join('\n'));
    },
  },
  {
    risk: 'read',
    definition: {
      name: 'list_files',
      description: 'List files under a workspace directory (default: the workspace root). Skips .git and node_modules.',
      input_schema: {
        type: 'object',
        properties: { path: { type: 'string' }, recursive: { type: 'boolean' } },
      },
    },
    summarize: (i) => `list ${String(i.path ?? '.')}`,
    async run(input, ctx) {
      const root = resolveInWorkspace(ctx.workspace, str(input, 'path', false));
      const recursive = input.recursive !== false;
      const out: string[] = [];
      const walk = (dir: string): void => {
        for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
          if (out.length >= MAX_LIST_ENTRIES) return;
          const full = path.join(dir, entry.name);
          const rel = path.relative(root, full).split(path.sep).join('/');
          if (entry.isDirectory()) {
            if (SKIPPED_DIRS.has(entry.name)) continue;
            out.push(rel + '/');
            if (recursive) walk(full);
          } else {
            out.push(rel);
          }
        }
      };
      walk(root);
      if (out.length >= MAX_LIST_ENTRIES) out.push(`… (stopped at ${MAX_LIST_ENTRIES} entries)`);
      return out.length ? out.join('\n') : '(empty directory)';
    },
  },
  {
    risk: 'edit',
    definition: {
      name: 'write_file',
      description: 'Create or overwrite a file in the workspace with the given content. Parent directories are created.',
      input_schema: {
        type: 'object',
        properties: { path: { type: 'string' }, content: { type: 'string' } },
        required: ['path', 'content'],
      },
    },
    summarize: (i) => `write ${String(i.path)} (${typeof i.content === 'string' ? i.content.split('\n').length : 0} lines)`,
    async run(input, ctx) {
      const given = str(input, 'path');
      const file = resolveInWorkspace(ctx.workspace, given);
      const content = str(input, 'content');
      writeWorkspaceFile(ctx.workspace, given, file, content);
      return `wrote ${Buffer.byteLength(content)} bytes to ${str(input, 'path')}`;
    },
  },
  {
    risk: 'edit',
    definition: {
      name: 'edit_file',
      description: 'Replace old_string with new_string in a workspace file. old_string must occur exactly once unless replace_all is true.',
      input_schema: {
        type: 'object',
        properties: {
          path: { type: 'string' },
          old_string: { type: 'string' },
          new_string: { type: 'string' },
          replace_all: { type: 'boolean' },
        },
        required: ['path', 'old_string', 'new_string'],
      },
    },
    summarize: (i) => `edit ${String(i.path)}`,
    async run(input, ctx) {
      const file = resolveInWorkspace(ctx.workspace, str(input, 'path'));
      const oldString = str(input, 'old_string');
      const newString = str(input, 'new_string');
      if (!oldString) throw new ToolInputError('old_string must not be empty');
      const { count, result } = replaceKeepingLineEndings(readWorkspaceFile(file), oldString, newString);
      if (count === 0) throw new ToolInputError('old_string not found in the file');
      if (count > 1 && input.replace_all !== true)
        throw new ToolInputError(`old_string occurs ${count} times; make it unique or set replace_all`);
      writeWorkspaceFile(ctx.workspace, str(input, 'path'), file, result);
      return `replaced ${count} occurrence(s) in ${str(input, 'path')}`;
    },
  },
  {
    risk: 'command',
    definition: {
      name: 'run_command',
      description: 'Run a shell command in the workspace directory and return its exit code and output.',
      input_schema: {
        type: 'object',
        properties: { command: { type: 'string' }, timeout_ms: { type: 'number' } },
        required: ['command'],
      },
    },
    summarize: (i) => `run ${String(i.command)}`,
    async run(input, ctx) {
      return runShellCommand(str(input, 'command'), ctx, num(input, 'timeout_ms') ?? ctx.commandTimeoutMs);
    },
  },
];

const byName = new Map(tools.map((t) => [t.definition.name, t]));

/** The tools offered to the model: plan mode is read-only, so it is only offered reads. */
export function toolDefinitions(mode: PermissionMode): ToolDefinition[] {
  return tools.filter((t) => mode !== 'plan' || t.risk === 'read').map((t) => t.definition);
}

/**
 * What a tool call needs. An edit under a git directory (any `.git` component, or a folder laid
 * out as one: `HEAD`, `config`, `objects/`) is a command: git runs programs named in its config
 * and hooks (`core.fsmonitor`, `core.hooksPath`, filters), so in Accept edits it still asks. So is
 * an edit of the editor's own configuration (`writesEditorConfig`).
 */
export function toolRisk(name: string, input: Record<string, unknown> = {}, workspace?: string): ToolRisk | undefined {
  const risk = byName.get(name)?.risk;
  if (risk !== 'edit' || typeof input.path !== 'string') return risk;
  return writesGitDirectory(input.path, workspace) || writesEditorConfig(input.path) ? 'command' : risk;
}

/**
 * Whether a path is configuration VS Code applies by itself: anything under a `.vscode` folder
 * (settings such as `terminal.integrated.env.*` or a terminal profile take effect at once in the
 * window that has the folder open; tasks and launch configurations run programs) or a
 * `.code-workspace` file (the same settings for a multi-root window). Windows ignores trailing dots
 * and spaces and case.
 */
export function writesEditorConfig(given: string): boolean {
  const parts = given
    .split(/[\\/]+/)
    .filter(Boolean)
    .map((part) => part.replace(/[. ]+$/, '').toLowerCase());
  return parts.some((part) => part === '.vscode') || (parts.at(-1)?.endsWith('.code-workspace') ?? false);
}

/** Whether a path names something inside (or is) a git directory. Windows ignores trailing dots and spaces and case. */
export function writesGitDirectory(given: string, workspace?: string): boolean {
  const parts = given.split(/[\\/]+/).filter(Boolean);
  if (parts.some((part) => part.replace(/[. ]+$/, '').toLowerCase() === '.git')) return true;
  if (!workspace) return false;
  const root = path.resolve(workspace);
  const target = path.resolve(root, given);
  if (looksLikeGitDir(target)) return true; // the folder itself (a write into it is caught below)
  let dir = path.dirname(target);
  for (;;) {
    const rel = path.relative(root, dir);
    if (rel.startsWith('..') || path.isAbsolute(rel)) return false;
    if (looksLikeGitDir(dir)) return true;
    if (rel === '') return false;
    dir = path.dirname(dir);
  }
}

function looksLikeGitDir(dir: string): boolean {
  const has = (name: string, kind: 'file' | 'dir') => {
    let stat: fs.Stats | undefined;
    try {
      stat = fs.lstatSync(path.join(dir, name), { throwIfNoEntry: false });
    } catch {
      return false; // ENOTDIR: `dir` is a file
    }
    return kind === 'file' ? stat?.isFile() === true : stat?.isDirectory() === true;
  };
  return has('HEAD', 'file') && has('config', 'file') && has('objects', 'dir');
}

export function summarizeTool(name: string, input: Record<string, unknown>): string {
  const tool = byName.get(name);
  return tool ? tool.summarize(input) : `${name} (unknown tool)`;
}

/** What the permission mode says about a tool: run it, ask the user, or refuse outright. */
export function permissionFor(mode: PermissionMode, risk: ToolRisk): 'allow' | 'ask' | 'deny' {
  if (risk === 'read') return 'allow';
  switch (mode) {
    case 'plan':
      return 'deny';
    case 'bypassPermissions':
      return 'allow';
    case 'acceptEdits':
      return risk === 'edit' ? 'allow' : 'ask';
    case 'default':
      return 'ask';
  }
}

export async function runTool(name: string, input: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult> {
  const tool = byName.get(name);
  if (!tool) return { content: `unknown tool ${name}`, isError: true };
  try {
    return { content: await tool.run(input, ctx), isError: false };
  } catch (err) {
    const message = err instanceof ToolInputError ? err.message : `${(err as Error).message}`;
    return { content: `error: ${message}`, isError: true };
  }
}

/**
 * run_command goes through the user's shell ON PURPOSE: the model asked for a shell command
 * line (pipes, globs, &&), so it is handed to the shell as ONE argument (`sh -c <command>`; on
 * Windows `cmd.exe /d /s /c "<command>"`, see shell.ts), never concatenated into a larger
 * command. This is the only place the project uses a shell, and only for text the model chose,
 * after the permission mode allowed it.
 * The agent's own credentials (ANTHROPIC_*) are removed from the command's environment.
 * The command stays in the agent's process group (not detached): whoever stops the agent's group
 * (the host's final SIGKILL, recovery after a crash) also stops every command it started.
 */
export function runShellCommand(command: string, ctx: ToolContext, timeoutMs: number): Promise<string> {
  const shell = shellInvocation(command);
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ANTHROPIC_')));
  return new Promise((resolve, reject) => {
    const child = spawn(shell.file, shell.args, {
      cwd: ctx.workspace,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      windowsVerbatimArguments: shell.windowsVerbatimArguments,
      windowsHide: true,
    });
    let output = '';
    const collect = (chunk: Buffer): void => {
      if (output.length < MAX_OUTPUT_CHARS * 2) output += chunk.toString('utf8');
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    let killedFor: string | null = null;
    const kill = (why: string): void => {
      killedFor = why;
      // Its own descendants only: it shares the agent's process group (src/core/process-control.ts).
      if (child.pid) void killSubtree(child.pid, systemProcessHost());
    };
    const timer = setTimeout(() => kill(`timed out after ${timeoutMs} ms`), timeoutMs);
    const onAbort = (): void => kill('interrupted');
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    child.on('error', (err) => {
      clearTimeout(timer);
      ctx.signal.removeEventListener('abort', onAbort);
      reject(err);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      ctx.signal.removeEventListener('abort', onAbort);
      const status = killedFor ? `killed: ${killedFor}` : signal ? `killed by ${signal}` : `exit code ${code}`;
      const text = `${status}\n${truncate(output)}`;
      if (killedFor || code !== 0) reject(new Error(text));
      else resolve(text);
    });
  });
}
