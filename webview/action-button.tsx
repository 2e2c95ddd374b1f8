// A card's or History row's action: a codicon and a label (a short one in a narrow panel).
export function ActionButton({
  testid,
  icon,
  label,
  short,
  onClick,
}: {
  testid: string;
  icon: string;
  label: string;
  short?: string;
  onClick(): void;
}) {
  return (
    <button type="button" class="action" data-testid={testid} title={label} aria-label={label} onClick={onClick}>
      <span class={`codicon codicon-${icon}`} aria-hidden="true" /> {ActionLabel({ label, short })}
    </button>
  );
}

/**
 * A button's words: the whole label, and in a narrow panel the short one (media/panel.css). Pure:
 * ActionButton calls it as a function (the same elements, one component less per card action).
 */
export function ActionLabel({ label, short }: { label: string; short?: string }) {
  if (short === undefined || short === label) return <span class="label">{label}</span>;
  return (
    <span class="label">
      <span class="long">{label}</span>
      <span class="short">{short}</span>
    </span>
  );
}
