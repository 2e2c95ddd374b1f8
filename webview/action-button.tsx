// A card's or History row's action: a codicon and a label (the label hides when narrow).
export function ActionButton({ testid, icon, label, onClick }: { testid: string; icon: string; label: string; onClick(): void }) {
  return (
    <button type="button" class="action" data-testid={testid} title={label} aria-label={label} onClick={onClick}>
      <span class={`codicon codicon-${icon}`} aria-hidden="true" /> <span class="label">{label}</span>
    </button>
  );
}
