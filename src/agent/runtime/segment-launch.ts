/**
 * Spawning a segment's agent from its adapter's launch: argv (never a shell string), from PATH
 * only, in the task's workspace, in its own process group (Windows: its tree), with the segment's
 * tag in its environment (segment-processes.ts) and its stdin the terminal's pipe, the reader's pipe or its prompt file.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import { commandInvocation, programToRun } from '../../core/executable-path';
import { treeSpawnOptions, type ProcessHost } from '../../core/process-control';
import type { AgentKind, AgentLaunch } from './agent-adapter';
import { agentGitEnv, agentRepositorySettings } from './agent-git-env';
import { newSegmentTag, SEGMENT_TAG_ENV } from './segment-processes';

/**
 * The agent's whole environment: the host's, the launch's variables set and unset, the segment's
 * tag, and last the git settings that keep the repository's config from running programs in the
 * agent's own git (agent-git-env.ts; `repository`: those switching off the drivers and hooks its
 * config names), for every agent alike.
 */
export function agentProcessEnv(
  launch: AgentLaunch,
  tag: string,
  host: NodeJS.ProcessEnv = process.env,
  repository: ReadonlyArray<readonly [string, string]> = [],
): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...host, ...launch.env, OFFPEAK_AGENT_PARENT_PID: String(process.pid), [SEGMENT_TAG_ENV]: tag };
  for (const name of launch.unsetEnv ?? []) delete env[name];
  return { ...env, ...agentGitEnv(env, repository) };
}

/**
 * Starts the agent; resolves once its process runs, with the tag its processes carry. Rejects,
 * saying which agent could not start, when the program cannot be started at all.
 */
export async function spawnAgent(
  kind: AgentKind,
  launch: AgentLaunch,
  cwd: string,
  processes: ProcessHost,
): Promise<{ child: ChildProcess; tag: string }> {
  // Every process of the segment inherits the tag, so one that left the group is found at the end.
  const tag = newSegmentTag();
  let stdinFd: number | undefined;
  let stdinText: Buffer | undefined; // Windows: a prompt file goes through a pipe (treeSpawnOptions)
  let child: ChildProcess;
  try {
    // Read from the folder's config as git reads it there (reading config runs nothing).
    const env = agentProcessEnv(launch, tag, process.env, await agentRepositorySettings(cwd));
    if (typeof launch.stdin === 'object' && processes.platform === 'win32') stdinText = fs.readFileSync(launch.stdin.file);
    else if (typeof launch.stdin === 'object') stdinFd = fs.openSync(launch.stdin.file, 'r');
    // From PATH only, never the task's folder; a Windows .cmd/.ps1 through its interpreter, as the OS would.
    const program = commandInvocation(programToRun(launch.command), launch.args);
    child = spawn(program.file, program.args, {
      windowsVerbatimArguments: program.windowsVerbatimArguments,
      cwd,
      env,
      stdio: [stdinFd ?? 'pipe', 'pipe', 'pipe', launch.eventsOnFd3 ? 'pipe' : 'ignore', launch.answersOnFd4 ? 'pipe' : 'ignore'],
      // POSIX: its own process group, so the final SIGKILL also reaches the agent's own children.
      ...treeSpawnOptions(processes),
    });
    await once(child, 'spawn'); // rejects with the 'error' of a program that cannot start
    child.on('error', () => undefined); // a later one (a signal that could not be sent) is not the start's
    if (stdinText) child.stdin?.on('error', () => undefined).end(stdinText);
  } catch (err) {
    throw new Error(`could not start the ${kind} agent (${launch.command}): ${(err as Error).message}`);
  } finally {
    if (stdinFd !== undefined) fs.closeSync(stdinFd); // the child holds its own copy
  }
  return { child, tag };
}
