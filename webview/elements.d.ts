// JSX typings for the @vscode-elements/elements custom elements the panel uses.
import type { JSX } from 'preact';

type ElementProps = JSX.HTMLAttributes<HTMLElement> & {
  value?: string;
  disabled?: boolean;
  secondary?: boolean;
  placeholder?: string;
  rows?: number;
  title?: string;
  heading?: string;
  open?: boolean;
  selected?: boolean;
  required?: boolean;
  for?: string;
  variant?: string;
  icon?: string;
  resize?: string;
  description?: string;
  /** vscode-textfield: text, search, date... */
  type?: string;
  /** vscode-textfield / vscode-single-select: the inner control's aria-label (no vscode-label beside it). */
  label?: string;
};

declare module 'preact' {
  namespace JSX {
    interface IntrinsicElements {
      'vscode-button': ElementProps;
      'vscode-textfield': ElementProps;
      'vscode-textarea': ElementProps;
      'vscode-single-select': ElementProps;
      'vscode-option': ElementProps;
      'vscode-badge': ElementProps;
      'vscode-collapsible': ElementProps;
      'vscode-label': ElementProps;
      'vscode-form-group': ElementProps;
      'vscode-divider': ElementProps;
      'vscode-progress-ring': ElementProps;
    }
  }
}
