// Typed reads of the extension's settings (package.json `contributes.configuration`).
import * as vscode from 'vscode';
import { CLAUDE_SETTING_SOURCES, DEFAULT_CLAUDE_SETTING_SOURCES, type AgentKind, type ClaudeSettingSources } from '../agent/adapters';

export interface OffPeakSettings {
  gatewayUrl: string;
  agent: AgentKind;
  claudeCodePath: string;
  claudeCodeSettingSources: ClaudeSettingSources;
  keepAwake: boolean;
  askTimeoutMinutes: number;
  /** What an unanswered question does: park the task (default) or deny after askTimeoutMinutes. */
  unansweredQuestion: 'park' | 'deny';
  askParkMinutes: number;
  /** New tasks on a git folder run on their own branch (worktree) or in the folder (docs/flows.md#isolation). */
  isolation: 'worktree' | 'inPlace';
  /** Finished tasks beyond these move to the history archive (docs/flows.md#archive). */
  history: { keepDays: number; keepCount: number };
}

export function readSettings(): OffPeakSettings {
  const c = vscode.workspace.getConfiguration('offPeak');
  const agent = c.get<string>('agent', 'reference');
  const sources = c.get<string>('claudeCodeSettingSources', DEFAULT_CLAUDE_SETTING_SOURCES);
  return {
    gatewayUrl: c.get<string>('gatewayUrl', 'http://127.0.0.1:8787').replace(/\/+$/, ''),
    agent: agent === 'claude-code' ? 'claude-code' : 'reference',
    claudeCodePath: c.get<string>('claudeCodePath', 'claude') || 'claude',
    claudeCodeSettingSources: CLAUDE_SETTING_SOURCES.find((s) => s === sources) ?? DEFAULT_CLAUDE_SETTING_SOURCES,
    keepAwake: c.get<boolean>('keepAwake', true),
    askTimeoutMinutes: Math.max(1, c.get<number>('askTimeoutMinutes', 10)),
    unansweredQuestion: c.get<string>('unansweredQuestion', 'park') === 'deny' ? 'deny' : 'park',
    askParkMinutes: Math.max(1, c.get<number>('askParkMinutes', 10)),
    isolation: c.get<string>('isolation', 'worktree') === 'inPlace' ? 'inPlace' : 'worktree',
    history: { keepDays: Math.max(1, c.get<number>('history.keepDays', 90)), keepCount: Math.max(0, c.get<number>('history.keepCount', 500)) },
  };
}
