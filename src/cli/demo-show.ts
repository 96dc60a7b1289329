// What both guided tours print: each kubectl command as a user would type it, then its output.
// `mayFail` for answers given by the exit code (auth can-i, a refused write shown on purpose).
import { kubectl, type KubectlResult } from './kubectl.js';
import { UserError } from '../util/user-error.js';

export type Show = (args: string[], input?: string, mayFail?: boolean) => KubectlResult;

export function kubectlShow(kubeconfig: string): Show {
  return (args, input, mayFail = false) => {
    process.stdout.write(`\n$ KUBECONFIG=${kubeconfig} kubectl ${args.join(' ')}\n`);
    const r = kubectl(kubeconfig, args, input);
    process.stdout.write(r.stdout);
    if (r.status !== 0 && !mayFail) throw new UserError(`kubectl ${args.join(' ')} failed: ${r.stderr.trim().split('\n').pop()}`);
    return r;
  };
}
