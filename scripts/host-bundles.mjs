// The extension host's code in bundles of its own (docs/architecture.md#lazy-bundles): what
// activation needs in dist/extension.js, the rest in lazy bundles that Node requires on first use.
// esbuild splits code only for ESM, and an extension is CommonJS, so each bundle is a build of its
// own and this plugin links them. Used by esbuild.mjs and by the test that loads the bundles.
import path from 'node:path';

/**
 * Each module listed belongs to that bundle alone. Elsewhere a dynamic `import()` or a `require()`
 * of it becomes a `require()` of its bundle, so the source keeps its lazy imports and runs as is
 * under tsx; in a lazy bundle a static import of another bundle's module does too, so what holds
 * process-wide state exists once. dist/extension.js may import lazily only what is listed here:
 * anything else would be inlined into it, and the build fails saying so.
 */
export const lazyBundles = {
  // The engine (store, service, the agent runtime's state, gateway client, schedules, away notifications,
  // review and merge), the panel, and what the commands load when run: required right after
  // activation, when the engine starts in the background, or when the panel is first shown.
  'engine.js': [
    'src/engine/host-engine.ts',
    'src/panel/service-backend.ts',
    'src/panel/service-views.ts',
    'src/personal/other-queue.ts',
    'src/personal/model-key-handover.ts',
    'src/vscode/panel.ts',
    'src/panel/create-task-command.ts',
    'src/panel/workplace-panel.ts',
    'src/agent/workplace/task-worktree.ts',
    'src/agent/workplace/folder-status.ts',
    'src/panel/uncommitted-notice.ts',
    'src/notify/notify-target.ts',
    'src/notify/target-command.ts',
    'src/protocol/notify.ts',
    // What a review reads of a task's changes (src/vscode/review.ts, when it opens a file).
    'src/agent/workplace/task-changes.ts',
    // Shared with personal.js, which reaches them here: sql.js is loaded once per process, temp
    // file names come from one counter, and zod (zod/mini, src/protocol/zod.ts) is in one bundle:
    // the schemas personal.js parses with are these.
    'src/store/db/sqljs.ts',
    'src/files/file-replace.ts',
    'src/protocol/gateway.ts',
    'src/gateway/config/schema.ts',
    'src/personal/authority-files.ts',
    // Shared with runtime.js: the ticket proxy's permission-relay schema (so zod stays here).
    'src/protocol/permission-relay.ts',
  ],
  // Personal mode's local authority, the reference gateway inside the extension host.
  'personal.js': ['src/personal/local-authority.ts'],
  // What starting an agent takes (the launch, the ticket proxy, check rounds, the workplace):
  // required by the runtime at a task's first start.
  // A task terminal's feed, required when src/vscode/task-terminals.ts first makes one.
  'runtime.js': ['src/agent/runtime/segment-kit.ts', 'src/agent/runtime/task-terminal-feed.ts'],
  // The GitHub API client, loaded when a pull request is first opened or looked up (docs/flows.md#pull-requests).
  'forge.js': ['@octokit/rest'],
  // The shipped price list (@pydantic/genai-prices, ~0.5 MB): what a model answer costs (docs/flows.md#capacity-and-cost).
  'prices.js': ['src/core/listed-prices.ts'],
};

/** esbuild options for one of the host's bundles (`extension.js` or a key of lazyBundles), with `root` the checkout. */
export function hostBundleBuild(bundle, root) {
  const entry =
    bundle === 'extension.js'
      ? { entryPoints: [path.join(root, 'src/extension.ts')] }
      : {
          // Each module as one namespace export, `m0`, `m1`… in list order.
          stdin: {
            contents: lazyBundles[bundle].map((spec, i) => `export * as m${i} from ${JSON.stringify(specifier(spec))};`).join('\n'),
            resolveDir: root,
            sourcefile: `${bundle.replace(/\.js$/, '')}-entry.js`,
            loader: 'js',
          },
        };
  // zod probes `navigator` (a Cloudflare check) and sql.js its language; in the extension host, reading that global logs
  // "PendingMigrationError: navigator is now a global in nodejs": no host bundle has it.
  return { ...entry, define: { navigator: 'undefined', 'globalThis.navigator': 'undefined' }, plugins: [hostBundles(bundle, root)] };
}

/** The one project module that acts at import: it gives zod/mini its English messages. */
const ACTS_AT_IMPORT = path.join('src', 'protocol', 'zod.ts');

const specifier = (spec) => (spec.startsWith('src/') ? `./${spec}` : spec);

/**
 * Sends imports of another bundle's modules to that bundle, and marks the project's own modules
 * free of side effects (none but ACTS_AT_IMPORT has any at import), so that one whose exports go unused — reached
 * only for a type, or for a function only a lazy bundle calls — stays out of the bundle.
 */
function hostBundles(self, root) {
  const src = path.join(root, 'src') + path.sep;
  let owners; // resolved path -> [bundle, index]
  return {
    name: 'host-bundles',
    setup(build) {
      const resolve = (spec, args) => build.resolve(spec, { ...args, pluginData: 'host-bundles' });
      const ownerOf = async (resolved) => {
        owners ??= (async () => {
          const map = new Map();
          for (const [bundle, specs] of Object.entries(lazyBundles))
            for (const [i, spec] of specs.entries()) {
              const r = await resolve(specifier(spec), { kind: 'import-statement', resolveDir: root });
              if (r.errors.length > 0) throw new Error(`lazyBundles: cannot resolve ${spec}`);
              map.set(r.path, [bundle, i]);
            }
          return map;
        })();
        return (await owners).get(resolved);
      };
      build.onResolve({ filter: /.*/ }, async (args) => {
        if (args.pluginData === 'host-bundles' || args.kind === 'entry-point') return undefined;
        if (args.namespace === 'host-bundle') return { path: args.path, external: true };
        const r = await resolve(args.path, { kind: args.kind, importer: args.importer, resolveDir: args.resolveDir });
        if (r.errors.length > 0) return { errors: r.errors };
        if (r.external) return { path: r.path, external: true };
        const lazy = args.kind === 'dynamic-import' || args.kind === 'require-call';
        const owner = await ownerOf(r.path);
        // Activation imports statically what it needs now; only its lazy imports go to a lazy bundle.
        if (owner && owner[0] !== self && (self !== 'extension.js' || lazy))
          return { path: `${owner[0]}#${owner[1]}`, namespace: 'host-bundle' };
        if (self === 'extension.js' && lazy && r.path.startsWith(src))
          return { errors: [{ text: `${args.path} is imported lazily but is in no lazy bundle: list it in scripts/host-bundles.mjs` }] };
        return {
          path: r.path,
          namespace: r.namespace,
          suffix: r.suffix,
          sideEffects: r.path.startsWith(src) ? r.path.endsWith(ACTS_AT_IMPORT) : r.sideEffects,
        };
      });
      // The module, as its bundle exports it.
      build.onLoad({ filter: /.*/, namespace: 'host-bundle' }, (args) => {
        const [bundle, i] = args.path.split('#');
        return { contents: `module.exports = require(${JSON.stringify(`./${bundle}`)}).m${i};`, loader: 'js', resolveDir: root };
      });
    },
  };
}
