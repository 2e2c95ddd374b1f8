// The gateway as `node dist/gateway.js` runs it: in demo mode without a real upstream, the
// built-in DEMO model is started first and becomes the gateway's model upstream. main.ts and the
// end-to-end demo test both start it this way.
import type { Clock } from '../core/clock';
import { usesDemoModel, type GatewayConfig } from './config';
import { startDemoModel } from './model/demo-model';
import type { Logger } from './http/logger';
import { GatewayServer } from './http/server';

export interface LaunchedGateway {
  gateway: GatewayServer;
  /** The DEMO model's URL when it is the upstream. */
  demoModelUrl: string | undefined;
  /** Closes the gateway (letting in-flight requests finish up to `graceMs`), then the demo model. */
  close(graceMs?: number): Promise<void>;
}

export async function launchGateway(config: GatewayConfig, options: { clock: Clock; log: Logger }): Promise<LaunchedGateway> {
  const demoModel = usesDemoModel(config)
    ? await startDemoModel({ script: config.demoScript, stepMs: config.demoStepMs, activeWindowMs: config.activeWindowMs })
    : undefined;
  let gateway: GatewayServer;
  try {
    gateway = await GatewayServer.start({
      config: demoModel ? { ...config, upstreamUrl: demoModel.url } : config,
      clock: options.clock,
      log: options.log,
    });
  } catch (error) {
    await demoModel?.close();
    throw error;
  }
  return {
    gateway,
    demoModelUrl: demoModel?.url,
    async close(graceMs) {
      await gateway.close(graceMs);
      await demoModel?.close();
    },
  };
}
