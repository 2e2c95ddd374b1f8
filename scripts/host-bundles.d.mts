// Types of scripts/host-bundles.mjs (plain JavaScript: esbuild.mjs imports it without a loader).
import type { BuildOptions, Plugin } from 'esbuild';

export const lazyBundles: Readonly<Record<string, readonly string[]>>;
export function hostBundleBuild(bundle: string, root: string): Pick<BuildOptions, 'entryPoints' | 'stdin'> & { plugins: Plugin[] };
