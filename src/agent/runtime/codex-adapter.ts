/**
 * OpenAI Codex's adapter (docs/flows.md#segments): `codex app-server`, driven over stdio by
 * `CodexReader` (JSON-RPC). The task's session id names its Codex thread: the first segment starts
 * the thread in the task's folder and keeps its id in a private file under `threadsDir`
 * (`<session id>.json`); every later segment resumes that thread. Codex reaches its model only
 * through the segment's ticket proxy: its model provider (the proxy's secret URL) is given per
 * thread over stdin, never in argv, and its key variable holds the proxy's dummy token (the proxy
 * adds the real key), or, with its own login, is not set at all.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { PermissionMode } from '../../core/types';
import {
  PROXY_DUMMY_TOKEN,
  writePrivateFile,
  type AgentAdapter,
  type AgentLaunch,
  type AgentOutputReader,
  type SegmentSpec,
} from './agent-adapter';
import { CodexReader, type CodexApprovalPolicy, type CodexSandbox } from './codex-reader';

export interface CodexOptions {
  /** Path of the native `codex` executable. */
  command: string;
  /** Where the task threads' ids are kept (a private folder of the extension's storage). */
  threadsDir: string;
  /** CODEX_HOME for the agent (tests isolate it); default: the user's (`~/.codex`), where its login and threads live. */
  codexHome?: string;
  env?: Record<string, string>;
}

/** The provider id Codex is told to use: the segment's ticket proxy. */
export const CODEX_PROVIDER_ID = 'offpeak';
/** The variable Codex reads the provider's key from (`env_key`): the proxy's dummy token, never a real key. */
export const CODEX_PROXY_KEY_ENV = 'OFFPEAK_CODEX_PROXY_TOKEN';

/** A permission mode as Codex's sandbox and approval policy. */
export function codexPermissions(mode: PermissionMode): { sandbox: CodexSandbox; approvalPolicy: CodexApprovalPolicy } {
  switch (mode) {
    case 'plan':
      return { sandbox: 'read-only', approvalPolicy: 'never' };
    case 'bypassPermissions':
      return { sandbox: 'danger-full-access', approvalPolicy: 'never' };
    default:
      return { sandbox: 'workspace-write', approvalPolicy: 'on-request' };
  }
}

const CODEX_EFFORT: Record<string, string> = { low: 'low', medium: 'medium', high: 'high' };

export class CodexAdapter implements AgentAdapter {
  readonly kind = 'codex' as const;
  readonly api = 'openai' as const;

  constructor(private readonly options: CodexOptions) {}

  launch(spec: SegmentSpec): AgentLaunch {
    // Its stderr log (shown in the terminal, its tail in a failure's reason) without colour codes.
    const env: Record<string, string> = { ...this.options.env, NO_COLOR: '1' };
    if (this.options.codexHome) env.CODEX_HOME = this.options.codexHome;
    if (!spec.ownLogin) env[CODEX_PROXY_KEY_ENV] = PROXY_DUMMY_TOKEN;
    // Only the user's own OpenAI credentials are left out: the proxy adds the key.
    const unsetEnv = spec.ownLogin ? [] : ['OPENAI_API_KEY', 'CODEX_API_KEY'];
    return { command: this.options.command, args: ['app-server'], env, unsetEnv, eventsOnFd3: false, stdin: 'driver' };
  }

  /** A thread this task's session started (its id was kept when Codex started it). */
  sessionExists(sessionId: string): boolean {
    return this.threadOf(sessionId) !== null;
  }

  /** The Codex thread of a task's session, or null before its first segment started one. */
  threadOf(sessionId: string): string | null {
    try {
      const kept = JSON.parse(fs.readFileSync(this.threadFile(sessionId), 'utf8')) as { threadId?: unknown };
      return typeof kept.threadId === 'string' ? kept.threadId : null;
    } catch {
      return null;
    }
  }

  createReader(spec?: Partial<SegmentSpec>): AgentOutputReader {
    if (!spec?.sessionId || !spec.workspacePath || spec.prompt === undefined || !spec.proxyBaseUrl)
      throw new Error('the Codex adapter reads the whole segment spec');
    const sessionId = spec.sessionId;
    const provider: Record<string, unknown> = {
      name: 'Off-Peak Tasks',
      base_url: `${spec.proxyBaseUrl.replace(/\/+$/, '')}/v1`,
      wire_api: 'responses',
      // A held request (a usage limit, the gateway's queue) may wait for hours: Codex must not cut it and retry.
      stream_idle_timeout_ms: 24 * 3600_000,
      // With its own login Codex sends it (the proxy passes it through); else the proxy's dummy token.
      ...(spec.ownLogin ? { requires_openai_auth: true } : { env_key: CODEX_PROXY_KEY_ENV }),
    };
    const known = spec.resume ? this.threadOf(sessionId) : null;
    return new CodexReader({
      resumeThreadId: known,
      prompt: spec.prompt,
      cwd: spec.workspacePath,
      model: spec.model ?? null,
      effort: spec.thoughtLevel ? (CODEX_EFFORT[spec.thoughtLevel] ?? null) : null,
      ...codexPermissions(spec.permissionMode ?? 'default'),
      modelProvider: CODEX_PROVIDER_ID,
      config: { model_providers: { [CODEX_PROVIDER_ID]: provider } },
      onThread: (threadId) => {
        if (threadId !== known)
          writePrivateFile(this.options.threadsDir, path.basename(this.threadFile(sessionId)), JSON.stringify({ threadId }));
      },
    });
  }

  private threadFile(sessionId: string): string {
    // The session id is ours (a UUID); anything else is not a file name.
    if (!/^[A-Za-z0-9-]+$/.test(sessionId)) throw new Error(`not a session id: ${sessionId}`);
    return path.join(this.options.threadsDir, `${sessionId}.json`);
  }
}
