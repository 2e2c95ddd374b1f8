// Types of scripts/third-party-notices.mjs (plain JavaScript: esbuild.mjs imports it without a loader).
export function packageDirsOfInputs(inputs: readonly string[], root: string): string[];
export function noticeOf(dir: string): { name: string; text: string };
export function thirdPartyNotices(dirs: readonly string[]): string;
