// `npm start -- --personal` (issue 21): without an upstream it says exactly what to set and exits
// non-zero, before building or starting anything; the key is read from the environment only and
// taken out of it (code-server and the agents never inherit it). Runs the real scripts/start.ts.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { personalStart } from '../../scripts/start-personal';

const repoRoot = path.resolve(__dirname, '..', '..');

describe('npm start -- --personal (scripts/start.ts argument handling)', () => {
  it('without --upstream-url and a key: prints what to set (the flag, the variables, an example) and exits 2 before building anything', () => {
    const env = { ...process.env };
    delete env.ANTHROPIC_API_KEY;
    delete env.OFFPEAK_MODEL_API_KEY;
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/start.ts', '--personal'], {
      cwd: repoRoot,
      env,
      encoding: 'utf8',
      timeout: 60_000,
    });
    assert.equal(run.status, 2, run.stderr);
    assert.match(run.stderr, /--upstream-url is not set; no API key in OFFPEAK_MODEL_API_KEY or ANTHROPIC_API_KEY\./);
    assert.match(run.stderr, /--upstream-url https:\/\/api\.anthropic\.com/);
    assert.doesNotMatch(run.stdout, /npm run build|\[start\]/, 'nothing was built or started');
  });

  it('with a key but no upstream: says the upstream is missing, and the key is taken out of the environment', () => {
    const env: NodeJS.ProcessEnv = { ANTHROPIC_API_KEY: 'sk-ant-api03-from-the-environment' };
    const result = personalStart(undefined, env);
    assert.equal(result.ok, false);
    assert.match(result.ok ? '' : result.message, /^--upstream-url is not set\./);
    assert.equal(env.ANTHROPIC_API_KEY, undefined);
  });

  it('with both: the upstream URL and the key, the key gone from the environment', () => {
    const env: NodeJS.ProcessEnv = { OFFPEAK_MODEL_API_KEY: 'sk-ant-api03-k', ANTHROPIC_API_KEY: 'other' };
    assert.deepEqual(personalStart('http://127.0.0.1:9999/', env), {
      ok: true,
      upstreamUrl: 'http://127.0.0.1:9999',
      modelApiKey: 'sk-ant-api03-k',
    });
    assert.deepEqual(env, {});
  });
});
