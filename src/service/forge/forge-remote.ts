/**
 * Which forge a task's repository is on (docs/flows.md#pull-requests): the remote's URL names the
 * host, the owner and the repository; only a known GitHub host gets a token (github.com, or a
 * GitHub Enterprise host the user listed in `offPeak.pullRequest.githubEnterpriseHosts`).
 */
import { isLiteralLoopback } from '../../core/loopback-host';
import type { ForgeKind } from '../../store';

export interface ForgeHost {
  kind: ForgeKind;
  /** host[:port], as a remote URL names it. */
  host: string;
  /** The REST API's base URL. */
  apiUrl: string;
  /** Where git pushes over https: `<gitOrigin>/<owner>/<repo>.git`. */
  gitOrigin: string;
  /** VS Code's authentication provider for it. */
  authProvider: 'github' | 'github-enterprise';
}

export interface ForgeRepo {
  host: ForgeHost;
  owner: string;
  repo: string;
  /** The https URL the push goes to (no credential). */
  pushUrl: string;
}

export const GITHUB_COM: ForgeHost = {
  kind: 'github',
  host: 'github.com',
  apiUrl: 'https://api.github.com',
  gitOrigin: 'https://github.com',
  authProvider: 'github',
};

/**
 * The known hosts: github.com and each Enterprise origin listed (`https://ghe.example.com`; plain
 * http only for a literal loopback address). An entry that is no such origin is left out, with why.
 */
export function forgeHosts(enterpriseOrigins: readonly string[]): { hosts: ForgeHost[]; problems: string[] } {
  const hosts = [GITHUB_COM];
  const problems: string[] = [];
  for (const entry of enterpriseOrigins) {
    let url: URL;
    try {
      url = new URL(/^[a-z]+:\/\//i.test(entry) ? entry : `https://${entry}`);
    } catch {
      problems.push(`${entry} is not a host`);
      continue;
    }
    if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLiteralLoopback(url.hostname))) {
      problems.push(`${entry}: https only`);
      continue;
    }
    hosts.push({
      kind: 'github',
      host: url.host,
      apiUrl: `${url.origin}/api/v3`,
      gitOrigin: url.origin,
      authProvider: 'github-enterprise',
    });
  }
  return { hosts, problems };
}

/** host, owner and repository of a remote URL (https, ssh, scp-like `git@host:owner/repo`); null for anything else. */
export function parseRemoteUrl(remote: string): { host: string; owner: string; repo: string } | null {
  const text = remote.trim();
  let host: string;
  let pathPart: string;
  const scp = /^(?:[^@/:]+@)?([^/:]+):(?!\/)(.+)$/.exec(text);
  if (/^[a-z+]+:\/\//i.test(text)) {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      return null;
    }
    if (!['https:', 'http:', 'ssh:', 'git+ssh:'].includes(url.protocol)) return null;
    host = url.protocol.endsWith('ssh:') ? url.hostname : url.host;
    pathPart = decodeURIComponent(url.pathname);
  } else if (scp) {
    host = scp[1];
    pathPart = scp[2];
  } else return null;
  const parts = pathPart
    .replace(/^\/+|\/+$/g, '')
    .replace(/\.git$/, '')
    .split('/');
  if (parts.length !== 2 || parts.some((p) => !/^[A-Za-z0-9_.-]+$/.test(p) || p === '.' || p === '..')) return null;
  return { host: host.toLowerCase(), owner: parts[0], repo: parts[1] };
}

/** The forge repository a remote URL is on, or why a pull request cannot go there. */
export function forgeRepoOf(remoteUrl: string, hosts: readonly ForgeHost[]): ForgeRepo | { refusal: string } {
  const parsed = parseRemoteUrl(remoteUrl);
  if (!parsed) return { refusal: `The remote's URL (${remoteUrl}) names no owner/repository on a forge.` };
  // An ssh remote names the host without the port its https side uses.
  const host = hosts.find((h) => h.host.toLowerCase() === parsed.host || h.host.toLowerCase().split(':')[0] === parsed.host);
  if (!host)
    return {
      refusal: `${parsed.host} is not a GitHub host Off-Peak Tasks knows: add its address to the setting offPeak.pullRequest.githubEnterpriseHosts if it is GitHub Enterprise.`,
    };
  return { host, owner: parsed.owner, repo: parsed.repo, pushUrl: `${host.gitOrigin}/${parsed.owner}/${parsed.repo}.git` };
}
