// The forms' labelled drop-down (task form, repeat fields): one shape for every select. It marks
// the chosen option `selected`, since a list that changes under it re-reads its options and would
// otherwise show the first.
import type { ComponentChildren } from 'preact';
import { valueOf } from './field-value';

export interface SelectChoice {
  value: string;
  label: string;
  /** Shown beside the option in the open list. */
  description?: string;
}

export function SelectField({
  label,
  testid,
  value,
  choices,
  onChange,
  disabled,
  children,
}: {
  label: string;
  testid: string;
  value: string;
  choices: readonly SelectChoice[];
  onChange(value: string): void;
  disabled?: boolean;
  /** Shown under the field (a hint). */
  children?: ComponentChildren;
}) {
  return (
    <div>
      <vscode-label>{label}</vscode-label>
      <vscode-single-select data-testid={testid} value={value} disabled={disabled} onChange={(e) => onChange(valueOf(e))}>
        {choices.map((c) => (
          <vscode-option key={c.value} value={c.value} description={c.description} selected={c.value === value}>
            {c.label}
          </vscode-option>
        ))}
      </vscode-single-select>
      {children}
    </div>
  );
}
