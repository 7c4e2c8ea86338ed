// Which version of each policy adapter the sampling server serves, and when an old version may go.
// Every optimiser step makes a new version, served under a new name `<name>-v<N>` (vLLM caches an
// adapter by name, so loading new weights under the old name could serve stale ones); a request
// acquires the current version's name before it is sent and releases it when its reply is in, and a
// replaced version is unloaded only once no request uses it, so a request never finds its adapter
// gone mid-flight.

export const servedAdapterName = (name: string, version: number): string => `${name}-v${version}`;

export class AdapterVersions {
  private readonly current = new Map<string, number>();
  private readonly inFlight = new Map<string, number>();
  /** Replaced versions waiting for their last request. */
  private readonly draining = new Set<string>();
  /** Every served name unloaded so far, in order (what the tests and the docs check). */
  readonly unloaded: string[] = [];

  constructor(private readonly unload: (served: string) => Promise<void>) {}

  /** The version now served for `name` (undefined before its first load). */
  version(name: string): number | undefined {
    return this.current.get(name);
  }

  /** The version number the next load of `name` takes. */
  nextVersion(name: string): number {
    const v = this.current.get(name);
    return v === undefined ? 0 : v + 1;
  }

  /** Names of versions still served: the current ones and those draining. */
  served(): string[] {
    return [...[...this.current].map(([n, v]) => servedAdapterName(n, v)), ...this.draining];
  }

  /** Requests now using the served name. */
  requests(served: string): number {
    return this.inFlight.get(served) ?? 0;
  }

  /** `version` of `name` is loaded and checked: it serves new requests; the previous version is unloaded once idle. */
  async publish(name: string, version: number): Promise<void> {
    const old = this.current.get(name);
    this.current.set(name, version);
    if (old !== undefined) await this.retire(servedAdapterName(name, old));
  }

  /** The adapter is deleted: its current version goes once idle. */
  async remove(name: string): Promise<void> {
    const v = this.current.get(name);
    if (v === undefined) return;
    this.current.delete(name);
    await this.retire(servedAdapterName(name, v));
  }

  /** The served name of `name`'s current version, counted as in use until release. */
  acquire(name: string): string {
    const v = this.current.get(name);
    if (v === undefined) throw new Error(`adapter '${name}' is not served (it was never created or loaded)`);
    const served = servedAdapterName(name, v);
    this.inFlight.set(served, this.requests(served) + 1);
    return served;
  }

  async release(served: string): Promise<void> {
    const left = this.requests(served) - 1;
    if (left > 0) this.inFlight.set(served, left);
    else this.inFlight.delete(served);
    if (left <= 0 && this.draining.has(served)) await this.drop(served);
  }

  private async retire(served: string): Promise<void> {
    this.draining.add(served);
    if (this.requests(served) === 0) await this.drop(served);
  }

  private async drop(served: string): Promise<void> {
    this.draining.delete(served);
    await this.unload(served);
    this.unloaded.push(served);
  }
}
