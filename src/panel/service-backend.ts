// Connects the panel to the task service and store. The few things only VS Code knows (the
// secret key, open folders, terminals) come in through `PanelHostBits`.
import type { DisposableLike } from '../core/disposable';
import type { AvailabilityState, TaskService } from '../service';
import { changeConcerns, type TaskStore } from '../store';
import type { PanelState } from '../protocol/webview';
import type { PanelBackend } from './panel-controller';

export interface PanelHostBits {
  hasApiKey(): Promise<boolean>;
  setApiKey(): Promise<unknown>;
  workspaces(): PanelState['workspaces'];
  models(): string[];
  openTerminal(taskId: string): Promise<unknown>;
  notice(): string | undefined;
}

const REASONS: Record<string, string> = {
  limit_reached: 'Ticket limit reached',
  not_eligible: 'Your plan does not include off-peak tasks',
  unavailable: 'No tickets available',
};

export function availabilityView(state: AvailabilityState): PanelState['availability'] {
  switch (state.status) {
    case 'enabled':
      return { canCreate: true, canTakeNumber: state.canTakeNumber };
    case 'disabled':
      return { canCreate: false, reason: REASONS[state.reason] ?? state.reason, nextTakeAt: state.nextTakeAt };
    case 'error':
      return { canCreate: false, reason: `Gateway unreachable: ${state.message}` };
    case 'unknown':
      return { canCreate: false, reason: 'Checking ticket availability…' };
  }
}

export function createServiceBackend(service: TaskService, store: TaskStore, host: PanelHostBits): PanelBackend {
  return {
    listTasks: () => service.listTasks(),
    ticketsOf: (id) => service.ticketsOf(id),
    history: () => service.history(),
    availability: () => availabilityView(service.availability.state),
    hasApiKey: () => host.hasApiKey(),
    models: () => host.models(),
    workspaces: () => host.workspaces(),
    notice: () => host.notice(),
    create: (input) => service.create(input),
    edit: (id, patch) => service.edit(id, patch),
    pause: (id) => service.pause(id),
    continue: (id) => service.continue(id),
    cancel: (id) => service.cancel(id),
    delete: (id) => service.delete(id),
    deleteFromHistory: (id) => service.deleteFromHistory(id),
    openTerminal: (id) => host.openTerminal(id),
    setApiKey: () => host.setApiKey(),
    refresh: () => service.availability.refresh(),
    onDidChange(listener): DisposableLike {
      const fire = () => listener();
      // Only what the panel shows: a window registering or a backoff record pushes nothing.
      const storeSub = store.onDidChange((change) => {
        if (changeConcerns(change, 'tasks', 'tickets')) listener();
      });
      service.availability.on('change', fire);
      service.on('synced', fire);
      return {
        dispose() {
          storeSub.dispose();
          service.availability.off('change', fire);
          service.off('synced', fire);
        },
      };
    },
  };
}
