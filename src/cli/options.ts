// Parsers of `ksview` flag values, and what several commands' flags share. Each parser turns the
// text a user typed into the value the command uses, or throws commander's InvalidArgumentError,
// which the CLI prints as one line naming the flag (`option '--port <port>' argument 'x' is
// invalid. must be ...`). Flags are spelled as kube spells its own (`--max-requests-inflight`:
// words joined by '-', "max" first, "inflight" one word); a former spelling stays accepted as a
// hidden alias (`hiddenAlias`).
import { InvalidArgumentError, Option } from 'commander';
import { accessSync, constants, statSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { isDNS1123Label, isDNS1123Subdomain } from '../kube/names.js';
import type { GroupResource } from '../storage/kind-categories.js';
import { parseServiceAccountRef, type ServiceAccountRef } from '../kube/service-account-ref.js';
import { defaultSpacesDir } from '../spaces/layout.js';

/**
 * A former spelling of `option` (flags such as '--its-max-in-flight <n>'), hidden from help and
 * still working: parsed by the same parser, it sets the same attribute, so the command's action
 * cannot tell the two apart. Scripts and charts written for the old name keep running.
 */
export function hiddenAlias(option: Option, formerFlags: string): Option {
  const alias = new Option(formerFlags, `former spelling of ${option.long}`).hideHelp();
  if (option.parseArg) alias.argParser(option.parseArg);
  alias.attributeName = () => option.attributeName();
  return alias;
}

/** `--dir`, the state folder of the local spaces (spaces, kubeconfig, demo). */
export const dirOption = () => new Option('--dir <path>', 'state folder of the local spaces').argParser(stateDir).default(defaultSpacesDir());

/** What the commands on the local spaces read from `--dir`. */
export interface DirFlags { dir: string }

export function intOption(min: number, max: number) {
  return (value: string): number => {
    const n = Number(value);
    if (!/^\d+$/.test(value) || n < min || n > max) throw new InvalidArgumentError(`must be a whole number from ${min} to ${max}`);
    return n;
  };
}

export function dnsLabel(value: string): string {
  if (!isDNS1123Label(value)) {
    throw new InvalidArgumentError('must be a DNS label: lowercase letters, digits and -, at most 63');
  }
  return value;
}

/** NAMESPACE/NAME of a ServiceAccount, both as kube validates them (--default-executor). */
export function serviceAccountRef(value: string): ServiceAccountRef {
  try {
    return parseServiceAccountRef(value);
  } catch (err) {
    throw new InvalidArgumentError(`must be NAMESPACE/NAME of a ServiceAccount (${(err as Error).message})`);
  }
}

/** NAMESPACE/NAME of an object (a Service), both DNS labels as kube validates them. */
export function namespacedName(value: string): { namespace: string; name: string } {
  const parts = value.split('/');
  if (parts.length !== 2 || !isDNS1123Label(parts[0]!) || !isDNS1123Label(parts[1]!)) {
    throw new InvalidArgumentError('must be NAMESPACE/NAME, both DNS labels (lowercase letters, digits and -), e.g. kubestellar-view/ksview');
  }
  return { namespace: parts[0]!, name: parts[1]! };
}

export function ipAddress(value: string): string {
  if (!net.isIP(value)) throw new InvalidArgumentError('must be an IP address, e.g. 127.0.0.1 or 0.0.0.0');
  return value;
}

/**
 * A folder ksview may keep state in: an existing folder, or a path whose nearest existing
 * ancestor is a folder we may write into (the folder is made on first use).
 */
export function stateDir(value: string): string {
  const dir = path.resolve(value);
  for (let p = dir; ; p = path.dirname(p)) {
    let isDir: boolean;
    try {
      isDir = statSync(p).isDirectory();
    } catch {
      if (p === path.dirname(p)) throw new InvalidArgumentError('no part of it exists');
      continue;
    }
    if (!isDir) throw new InvalidArgumentError(`${p} is a file, not a folder`);
    if (p !== dir) {
      try {
        accessSync(p, constants.W_OK);
      } catch {
        throw new InvalidArgumentError(`cannot make it: ${p} is not writable`);
      }
    }
    return dir;
  }
}

/** `clusterroles.rbac.authorization.k8s.io,serviceaccounts` → group/resource pairs. */
export function resourceList(value: string): GroupResource[] {
  const items = value.split(',').map((s) => s.trim()).filter(Boolean);
  return items.map((item) => {
    if (!isDNS1123Subdomain(item)) {
      throw new InvalidArgumentError(`${JSON.stringify(item)} is not <resource>.<group> (lowercase, e.g. clusterroles.rbac.authorization.k8s.io)`);
    }
    const dot = item.indexOf('.');
    return dot < 0 ? { group: '', resource: item } : { group: item.slice(dot + 1), resource: item.slice(0, dot) };
  });
}

/** The inverse of resourceList: how a list of kinds is written on the command line. */
export function formatResourceList(list: readonly GroupResource[]): string {
  return list.map((gr) => (gr.group ? `${gr.resource}.${gr.group}` : gr.resource)).join(',');
}

/** A duration such as 500ms, 5s, 2m (a bare number is seconds), in milliseconds. */
export function durationOption(min: number, max: number) {
  return (value: string): number => {
    const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(value.trim());
    const ms = m ? Number(m[1]) * ({ ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[m[2] ?? 's'] ?? 1000) : NaN;
    if (!(ms >= min && ms <= max)) throw new InvalidArgumentError(`must be a duration from ${min} ms to ${max / 1000} s, e.g. 5s or 500ms`);
    return ms;
  };
}
