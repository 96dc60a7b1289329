// Runs the real kubectl against a kubeconfig, for the demo and for tests: the argv is echoed so a
// user can repeat each step by hand.
import { spawnSync } from 'node:child_process';
import { UserError } from '../util/user-error.js';

export interface KubectlResult {
  status: number;
  stdout: string;
  stderr: string;
}

export function kubectl(kubeconfig: string, args: string[], input?: string): KubectlResult {
  const r = spawnSync('kubectl', args, {
    env: { ...process.env, KUBECONFIG: kubeconfig },
    input,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (r.error) throw new UserError(`cannot run kubectl: ${r.error.message}`);
  return { status: r.status ?? 1, stdout: r.stdout, stderr: r.stderr };
}
