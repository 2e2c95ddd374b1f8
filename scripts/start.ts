// `npm start`: runs the product on this machine.
//   1. builds the extension, gateway and agent bundles;
//   2. ensures code-server is set up (the same cached set-up as `npm run test:vscode`);
//   3. starts the reference Off-Peak Gateway in demo mode (`node dist/gateway.js --demo --port P`)
//      when the build supports it; its banner is printed, its JSON log goes to <state>/gateway.log;
//   4. starts code-server with this extension installed and offPeak.gatewayUrl pointing at it,
//      behind code-server's password page with a random password made for this start;
//   5. once code-server serves VS Code, prints the URL to open in a browser and the password.
//      Ctrl+C stops everything. A step that fails stops everything started so far and says why.
// The workbench is a terminal as this user for whoever gets in, hence the password. --host may be
// another interface (the password guards it, over plain HTTP: prefer an SSH tunnel); the demo
// gateway, whose demo key is public, listens on loopback only. The start opens no window itself:
// a window opened and left would keep an extension host (and the task lease) of its own.
//
// usage: npm start [-- --port 8080] [--host 127.0.0.1] [--folder <workspace dir>] [--no-build]
//                   [--state <dir>]   (where settings and the task DB persist; default .tools/start/)
//                   [--check]   (open the workbench in headless Chromium, log in with the password,
//                                queue a task by clicks, see it complete, then stop: a smoke test)
//                   [--personal --upstream-url <url>]   personal mode: no gateway; the key comes from
//                                OFFPEAK_MODEL_API_KEY or ANTHROPIC_API_KEY in the environment and is
//                                handed to the first window that opens, which keeps it in its
//                                SecretStorage (scripts/start-personal.ts; without them it says
//                                what to set, exit 2). With --check and no --upstream-url the model
//                                API is a scripted stand-in (a test fixture) and the key is made up.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { removeModelKeyHandover, writeModelKeyHandover } from '../src/personal/model-key-handover';
import { extensionStorageDir, freePort, portIsFree, startCodeServer, waitUntilServing, type RunningCodeServer } from './vscode/code-server';
import { ensureVsCodeTools, REPO_ROOT, TOOLS_DIR } from './vscode/tools';
import { MODEL_KEY_ENV, personalStart, scriptedModelApi, type PersonalModelApi, type PersonalStart } from './start-personal';
import { checkWorkbench } from './start-check';
import { gatewayOutputPrinter } from './start-gateway-output';
import { ensureDemoRepository } from './demo-workspace';
import { installExtension, startGateway, STEP_TIMEOUT_MS, type GatewayProcess } from './vscode/workbench';

const { values: opts } = parseArgs({
  options: {
    port: { type: 'string' },
    host: { type: 'string', default: '127.0.0.1' },
    folder: { type: 'string' },
    state: { type: 'string' },
    'no-build': { type: 'boolean', default: false },
    check: { type: 'boolean', default: false },
    personal: { type: 'boolean', default: false },
    'upstream-url': { type: 'string' },
  },
  allowPositionals: false,
});

const log = (msg: string): void => console.log(`[start] ${msg}`);
const START_DIR = path.join(TOOLS_DIR, 'start');

/** Where the demo gateway listens, whatever --host says: its demo key is printed and public. */
const GATEWAY_HOST = '127.0.0.1';

/** Starts the reference gateway in demo mode, or explains why it is not available. */
async function startDemoGateway(stateDir: string, extraArgs: string[] = []): Promise<GatewayProcess | undefined> {
  try {
    // Its banner (URL, demo API key) and its warnings as readable lines; its JSON log to a file.
    const print = gatewayOutputPrinter((text) => process.stdout.write(text), path.join(stateDir, 'gateway.log'));
    return await startGateway(GATEWAY_HOST, extraArgs, print);
  } catch (err) {
    log(`reference gateway demo mode is not available (${(err as Error).message.split('\n')[0]}): starting VS Code without a gateway`);
    return undefined;
  }
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** Personal mode's model API and key: from the command line and the environment, or the check's scripted stand-in. */
async function personalModelApi(): Promise<PersonalModelApi> {
  if (opts.check && !opts['upstream-url']) {
    for (const name of MODEL_KEY_ENV) delete process.env[name]; // never sent to a stand-in, nor inherited
    const scripted = await scriptedModelApi();
    log(
      `check: the model API is a scripted stand-in at ${scripted.upstreamUrl} (TEST FIXTURE test/fixtures/fake-anthropic-upstream.ts, not a model); its key is made for this check`,
    );
    return scripted;
  }
  // Checked before anything is built or started; the key leaves process.env here.
  const checked: PersonalStart = personalStart(opts['upstream-url'], process.env);
  if (!checked.ok) {
    console.error(`npm start: ${checked.message}`);
    process.exit(2);
  }
  return checked;
}

async function main(): Promise<void> {
  if (!opts.personal && opts['upstream-url']) throw new Error('--upstream-url goes with --personal');
  // What this start started, stopped in reverse order on Ctrl+C, at the end of a check, or when a step fails.
  const stops: (() => Promise<void> | void)[] = [];
  const stopAll = async (): Promise<void> => {
    for (const stop of stops.splice(0).reverse())
      await Promise.resolve()
        .then(stop)
        .catch(() => undefined);
  };
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (stopping) return;
    stopping = true;
    log(`${signal}: stopping everything this start began`);
    void stopAll().finally(() => process.exit(0));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  let step = 'read the personal mode settings';
  let server: RunningCodeServer | undefined;
  let stateDir: string | undefined;
  try {
    const personal = opts.personal ? await personalModelApi() : undefined;
    if (personal?.stop) stops.push(personal.stop);
    if (!opts['no-build']) {
      step = 'build the extension';
      // Quiet: a user of npm start sees no bundle list, sizes or test bundles, only a problem.
      log('building the extension…');
      const build = spawnSync(process.execPath, ['esbuild.mjs', '--quiet'], { cwd: REPO_ROOT, stdio: 'inherit' });
      if (build.status !== 0) throw new Error('npm run build failed');
    }
    step = 'set up code-server';
    // A browser only for the check: the start itself opens no window.
    const tools = ensureVsCodeTools({ browser: opts.check ?? false });
    const host = opts.host ?? '127.0.0.1';
    let port = opts.port ? Number(opts.port) : 8080;
    if (!Number.isInteger(port) || port <= 0 || port > 65535) throw new Error(`--port ${opts.port} is not a port number`);
    if (!(await portIsFree(port, host))) {
      if (opts.port) throw new Error(`port ${port} on ${host} is in use`);
      port = await freePort(host);
    }

    step = 'prepare the demo folder and install the extension';
    // --check starts from a clean slate, so nothing restored from an earlier session can pass it.
    stateDir = opts.check ? mkdtempSync(path.join(os.tmpdir(), 'offpeak-start-check-')) : path.resolve(opts.state ?? START_DIR);
    const workspace = path.resolve(opts.folder ?? path.join(stateDir, 'workspace'));
    mkdirSync(workspace, { recursive: true });
    // The demo folder is a repository of its own (a folder --folder names is the user's, as it is).
    if (!opts.folder && (await ensureDemoRepository(workspace)) === 'made')
      log(`made ${workspace} a git repository with a first commit (tasks there run on their own branch)`);
    const extensionId = installExtension(path.join(stateDir, 'extensions'));
    log(`installed ${extensionId} from ${REPO_ROOT} into ${path.join(stateDir, 'extensions')}`);
    const storageDir = extensionStorageDir(stateDir, extensionId);
    if (personal) {
      step = 'hand the model API key over';
      // For the first window that opens (the user's): it imports the key into its SecretStorage and deletes the file.
      writeModelKeyHandover(storageDir, personal.modelApiKey);
      stops.push(() => removeModelKeyHandover(storageDir)); // nobody took it: it does not outlive the start
    }

    // The check drives the UI, not the demo: its task (default permissions) would wait for answers
    // to the paced demo script's permission asks, so its gateway's demo model answers at once.
    step = 'start the demo gateway';
    const gateway = personal ? undefined : await startDemoGateway(stateDir, opts.check ? ['--demo-script', 'echo'] : []);
    if (gateway) stops.push(() => gateway.stop());

    step = 'start code-server';
    server = await startCodeServer({
      tools,
      stateDir,
      smokeTestDriver: false, // a normal workbench: notifications are shown
      host,
      port,
      startTimeoutMs: 2 * STEP_TIMEOUT_MS,
      userSettings: {},
      // The check's window needs none of them (a user's start keeps them all).
      lean: opts.check,
      // offPeak.gatewayUrl is machine-scoped: code-server reads it from the Remote settings.
      // The demo model's script uses the reference agent's tools: the demo pins that agent (`auto`
      // would pick an installed Claude Code), and so does the check against the scripted stand-in.
      machineSettings: personal
        ? {
            'offPeak.mode': 'personal',
            'offPeak.personal.baseUrl': personal.upstreamUrl,
            'offPeak.personal.modelCredential': 'apiKey',
            ...(personal.stop ? { 'offPeak.agent': 'reference' } : {}),
          }
        : gateway
          ? { 'offPeak.gatewayUrl': gateway.url, 'offPeak.agent': 'reference' }
          : undefined,
    });
    const started = server;
    stops.push(() => started.stop());
    step = 'serve VS Code';
    await waitUntilServing(server.origin, 2 * STEP_TIMEOUT_MS);

    const url = `${server.origin}/?folder=${encodeURIComponent(workspace)}`;
    console.log('');
    console.log(`Off-Peak Tasks is running in VS Code (code-server). Open this URL in a browser:`);
    console.log(`  ${url}`);
    console.log(`Password (new at every start; the login page asks for it): ${server.password}`);
    if (!isLoopback(host))
      console.log(
        `Listening on ${host}: anyone who can reach it gets the login page, and the password crosses the network unencrypted (plain HTTP). Prefer --host 127.0.0.1 with an SSH tunnel.`,
      );
    console.log(
      personal
        ? `Personal mode: no gateway; tasks are queued by a local authority on this machine and sent to ${personal.upstreamUrl}. The model API key goes to the first window you open, which keeps it in its SecretStorage.`
        : gateway
          ? `Reference gateway (demo mode): ${gateway.url}; give the extension its demo API key (printed above) with "Off-Peak: Set Gateway API Key…".`
          : 'No gateway running: set offPeak.gatewayUrl in the settings.',
    );
    console.log('Then run "Off-Peak: Open Off-Peak Tasks" from the command palette (F1). Press Ctrl+C to stop.');
    console.log('');

    if (opts.check) {
      step = 'pass the check';
      await checkWorkbench({
        tools,
        url,
        password: server.password,
        userData: path.join(stateDir, 'user-data'),
        workspace,
        log,
        gateway: gateway !== undefined,
        personal: personal && { modelApiKey: personal.modelApiKey, modelRequestKeys: personal.modelRequestKeys },
      });
      await stopAll();
      rmSync(stateDir, { recursive: true, force: true });
      return;
    }
  } catch (err) {
    if (opts.check && server) console.error(`--- code-server log (tail) ---\n${server.logTail()}`);
    await stopAll();
    if (opts.check && stateDir) rmSync(stateDir, { recursive: true, force: true });
    const why = ((err as Error).message ?? String(err)).split('\n')[0];
    const logNote = !opts.check && server ? ` (code-server's log: ${server.logFile})` : '';
    throw new Error(`could not ${step}: ${why}; everything this start began is stopped${logNote}`);
  }
  const code = await server.exited;
  if (!stopping) {
    log(`code-server exited with code ${code}\n${server.logTail()}`);
    await stopAll();
    process.exit(1);
  }
}

main().catch((err: unknown) => {
  console.error(`npm start: ${(err as Error).message}`);
  process.exit(1);
});
