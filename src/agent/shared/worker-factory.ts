// How the fronts (pull: ../agent-process.ts, push: ../push-supervisor.ts) make the per-cluster worker: the
// process wiring passes a factory that builds the ApplyEngine and the ClusterAgent, so the fronts
// are built and tested without them.
import type { Upstream } from '../../kube/upstream.js';
import type { ClusterWorker } from './contract.js';
import type { AgentLog } from './log.js';

export interface WorkerFactoryOptions {
  cluster: string;
  its: Upstream;
  wec: Upstream;
  hubHash: string;
  agentID: string;
  log: AgentLog;
}

export type CreateWorker = (o: WorkerFactoryOptions) => ClusterWorker;

/** What a front needs of Registration (a fake in tests). */
export interface RegistrationLike {
  start(): void;
  stop(): Promise<void>;
  isAccepted(): boolean;
  setWecUnreachable(reason: string | undefined): void;
  setHeldByAnotherFleet(holder: string | undefined): void;
  readonly itsError: string | undefined;
}
