// What starting a segment takes beyond the runtime's own state: the agent's launch, its ticket
// proxy, the check rounds, the workplace. The runtime imports it at a task's first start, so the
// extension host loads it then (dist/runtime.js; docs/architecture.md#lazy-bundles).
export { SegmentRun } from './segment-runner';
export { watchAgent } from './agent-watchdog';
export { SegmentWork, segmentCheckOf, ticketDeadlineOf } from './segment-work';
export { guardCheck } from './check-guards';
export { dropUnstartedWorktree, resolveWorkplace } from '../workplace/task-workplace';
export { recordFirstStart, sessionPlan, stopUnstarted } from './segment-start';
