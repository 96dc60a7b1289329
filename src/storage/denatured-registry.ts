// The denatured kinds of one WDS, kept current: discovers them (./denatured-kinds.ts), installs or
// upgrades their CRDs (./crd-installer.ts) and holds one store per kind. `start()` syncs once,
// retries every 10 s until a sync succeeds, then re-syncs every 5 minutes so a WDS upgrade that
// changes a native schema reaches the CRD without a restart. Until the first sync succeeds,
// `storeFor` answers undefined and `ready` is false (the view then answers 503 for these kinds).
import { createHash } from 'node:crypto';
import { installDenaturedCRDs, type InstallResult } from './crd-installer.js';
import { discoverDenaturedKinds } from './denatured-kinds.js';
import { DenaturedStore } from './denatured-store.js';
import { kindStrategy } from './denatured-strategy.js';
import type { GroupResource } from './kind-categories.js';
import type { Upstream } from '../kube/upstream.js';
import type { NativeRegistries } from './native-code.js';

export interface RegistryLog {
  info(msg: string): void;
  error(msg: string): void;
}

const RETRY_MS = 10_000;
const RESYNC_MS = 5 * 60_000;

export class DenaturedRegistry {
  private stores = new Map<string, DenaturedStore>();
  private timer: NodeJS.Timeout | undefined;
  private syncing: Promise<InstallResult[]> | undefined;
  /** sha256 of the kinds (OpenAPI included) the stores were made from. */
  private fingerprint = '';
  ready = false;
  lastError: string | undefined;

  constructor(private readonly up: Upstream, private readonly configured: readonly GroupResource[], private readonly log: RegistryLog,
    private readonly native: NativeRegistries) {}

  storeFor(group: string, resource: string): DenaturedStore | undefined {
    return this.stores.get(`${resource}.${group}`);
  }

  /** The store of the kind stored as `<plural>.denatured.kubestellar.io` (plurals are unique among the kinds). */
  storeForStored(plural: string): DenaturedStore | undefined {
    for (const s of this.stores.values()) if (s.kind.plural === plural) return s;
    return undefined;
  }

  /** Discovers the kinds and applies their CRDs; concurrent calls share one run. */
  sync(): Promise<InstallResult[]> {
    this.syncing ??= (async () => {
      try {
        const kinds = await discoverDenaturedKinds(this.up, this.configured);
        const results = await installDenaturedCRDs(this.up, kinds);
        // Same schemas as last time: keep the stores, whose validators are compiled already.
        const fingerprint = createHash('sha256').update(JSON.stringify(kinds)).digest('hex');
        if (fingerprint !== this.fingerprint) {
          const stores = new Map<string, DenaturedStore>();
          for (const k of kinds) stores.set(`${k.plural}.${k.group}`, new DenaturedStore({ up: this.up, strategy: kindStrategy(k), native: this.native, log: (m) => this.log.error(m) }));
          this.stores = stores;
          this.fingerprint = fingerprint;
        }
        this.ready = true;
        this.lastError = undefined;
        const changed = results.filter((r) => r.changed).map((r) => r.name);
        if (changed.length > 0) this.log.info(`denatured CRDs applied: ${changed.join(', ')}`);
        return results;
      } catch (err) {
        this.lastError = (err as Error).message;
        throw err;
      } finally {
        this.syncing = undefined;
      }
    })();
    return this.syncing;
  }

  /** The first sync (its failure is logged, not thrown), then retries and periodic re-syncs. */
  async start(): Promise<void> {
    const schedule = () => {
      this.timer = setTimeout(() => {
        this.sync().catch((err) => this.log.error(`denatured kinds: ${(err as Error).message}`)).finally(schedule);
      }, this.ready ? RESYNC_MS : RETRY_MS);
      this.timer.unref();
    };
    try {
      await this.sync();
    } catch (err) {
      this.log.error(`denatured kinds: ${(err as Error).message} (retrying every ${RETRY_MS / 1000} s)`);
    }
    schedule();
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
  }
}
