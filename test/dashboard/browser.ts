// Headless Chromium for the dashboard tests: Debian's chromium (apt-get install chromium; scripts/
// setup.sh installs it) driven by playwright-core, in a fresh profile that is removed afterwards.
// MARFT_CHROMIUM names another Chromium binary. Missing: the tests skip saying so, except under
// CI=true, where they fail.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

export const CHROMIUM = process.env.MARFT_CHROMIUM || '/usr/bin/chromium';

/** Why the browser tests cannot run here (null: they can); throws under CI, which must run them. */
export function browserSkipReason(): string | null {
  if (existsSync(CHROMIUM)) return null;
  const reason = `${CHROMIUM} is missing (apt-get install chromium, or bash scripts/setup.sh; MARFT_CHROMIUM names another binary)`;
  if (process.env.CI === 'true') throw new Error(`CI must run the dashboard's browser tests: ${reason}`);
  return reason;
}

export interface Browser {
  context: BrowserContext;
  close(): Promise<void>;
}

export async function launchBrowser(viewport = { width: 1400, height: 1000 }): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), 'marft-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
