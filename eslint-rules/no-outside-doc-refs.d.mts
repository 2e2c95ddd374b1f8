import type { ESLint, Rule } from 'eslint';

export const noOutsideDocRefs: Rule.RuleModule;
export function findOutsideRefs(text: string, fromFile: string, root?: string): string[];
export function markdownAnchors(file: string): Set<string>;
declare const plugin: ESLint.Plugin;
export default plugin;
