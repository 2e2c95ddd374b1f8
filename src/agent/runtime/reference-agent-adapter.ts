/**
 * The bundled reference agent's adapter: its argv (the prompt through a private file, events on
 * fd 3, answers to its questions on fd 4) and its JSON events read into a result and asks.
 */
import fs from 'node:fs';
import path from 'node:path';
import { currentValue, type LiveValue } from '../../core/live-value';
import { DEFAULT_ASK_TIMEOUT_MS, type AskAnsweredBy } from '../questions/asks';
import { credentialEnv, writePrivateFile } from './agent-adapter';
import type { AgentAdapter, AgentLaunch, AgentOutputReader, AgentResult, SegmentSpec } from './agent-adapter';

export interface ReferenceAgentOptions {
  /** How to run the bundled agent: e.g. [process.execPath, '<ext>/dist/reference-agent.js']. */
  command: string;
  argsPrefix: string[];
  sessionsDir: string;
  /** Deny an unanswered permission prompt after this long (so an unattended night run goes on). */
  askTimeoutMs?: LiveValue<number>;
  /** The host parks the task on an unanswered prompt after this long (the agent's prompt says so); undefined: it does not park. Read at each launch. */
  askParkMs?: LiveValue<number | undefined>;
  maxRetries?: number;
  /** Extra environment (tests shorten the agent's own retry backoff). */
  env?: Record<string, string>;
}

/** The bundled agent (`dist/reference-agent.js`), run by Node: `ELECTRON_RUN_AS_NODE` in the extension host. */
export class ReferenceAgentAdapter implements AgentAdapter {
  readonly kind = 'reference' as const;

  constructor(private readonly options: ReferenceAgentOptions) {}

  launch(spec: SegmentSpec): AgentLaunch {
    // The prompt goes through a file: argv is world-readable and limited in size (128 KiB per element on Linux).
    const promptFile = writePrivateFile(spec.segmentDir, 'prompt.txt', spec.prompt);
    const args = [
      ...this.options.argsPrefix,
      spec.resume ? '--resume' : '--session-id',
      spec.sessionId,
      '--prompt-file',
      promptFile,
      '--cwd',
      spec.workspacePath,
      '--permission-mode',
      spec.permissionMode,
      '--sessions-dir',
      this.options.sessionsDir,
      '--events-fd',
      '3',
      '--answers-fd',
      '4',
      '--ask-timeout-ms',
      String(currentValue(this.options.askTimeoutMs ?? DEFAULT_ASK_TIMEOUT_MS)),
    ];
    const askParkMs = currentValue(this.options.askParkMs);
    if (askParkMs !== undefined) args.push('--ask-park-ms', String(askParkMs));
    if (spec.model) args.push('--model', spec.model);
    const thought = referenceThoughtLevel(spec.thoughtLevel);
    if (thought) args.push('--thought-level', thought);
    if (this.options.maxRetries !== undefined) args.push('--max-retries', String(this.options.maxRetries));
    return {
      command: this.options.command,
      args,
      env: {
        ...this.options.env,
        ANTHROPIC_BASE_URL: spec.proxyBaseUrl,
        ...credentialEnv(spec).env,
        // The extension host's execPath is Electron; this makes it behave as plain Node.
        ELECTRON_RUN_AS_NODE: '1',
      },
      unsetEnv: credentialEnv(spec).unsetEnv,
      eventsOnFd3: true,
      answersOnFd4: true,
      stdin: 'terminal',
    };
  }

  sessionExists(sessionId: string): boolean {
    return fs.existsSync(path.join(this.options.sessionsDir, `${sessionId}.jsonl`));
  }

  createReader(): AgentOutputReader {
    let result: AgentResult | undefined;
    const reader: AgentOutputReader = {
      // The bundled agent removes control sequences from model and tool text itself; its own
      // output keeps only the Backspace echo of a typed answer (reference-agent/agent.ts).
      stdout: (chunk) => chunk,
      end: () => '',
      event: (event) => {
        if (event.type === 'result') {
          result =
            event.ok === true ? { ok: true, summary: String(event.text ?? '') } : { ok: false, error: String(event.error ?? 'failed') };
        } else if (event.type === 'input_needed' && typeof event.ask_id === 'string') {
          reader.onAsk?.({
            agentAskId: event.ask_id,
            tool: String(event.tool ?? ''),
            summary: String(event.summary ?? ''),
            input: typeof event.input === 'string' ? event.input : '',
            deadlineAt: typeof event.deadline_at === 'number' ? event.deadline_at : null,
            ...(event.call !== undefined ? { call: event.call } : {}),
          });
        } else if (event.type === 'input_answered' && typeof event.ask_id === 'string') {
          const by = REFERENCE_ANSWERED_BY[String(event.by)] ?? 'terminal';
          reader.onAskSettled?.({ agentAskId: event.ask_id, decision: event.allowed === true ? 'allow' : 'deny', by });
        }
      },
      result: () => result,
    };
    return reader;
  }
}

const REFERENCE_ANSWERED_BY: Record<string, AskAnsweredBy> = { terminal: 'terminal', host: 'host', timeout: 'timeout', interrupt: 'ended' };

function referenceThoughtLevel(level: string | null): string | null {
  if (!level) return null;
  return ['none', 'low', 'medium', 'high'].includes(level) ? level : null;
}
