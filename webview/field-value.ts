// The value of a @vscode-elements field from its input or change event.
type Value = { value: string };
export const valueOf = (e: Event): string => (e.currentTarget as unknown as Value).value ?? '';
