import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

/** Debian's Chromium, which playwright-core drives (it downloads no browser of its own); RXKUBE_CHROMIUM names another. */
export const chromiumPath = process.env.RXKUBE_CHROMIUM ?? '/usr/bin/chromium';

/**
 * Chromium missing is a failure, not a silent skip (as kubectl's is, in
 * kubectl.helpers.ts): the live view's tests are part of the contract.
 * RXKUBE_SKIP_BROWSER=1 skips them on purpose, and the totals line then
 * says how many were skipped.
 */
const skipOnPurpose = process.env.RXKUBE_SKIP_BROWSER === '1';
const missing =
  `chromium not found at ${chromiumPath}: the live view's tests drive a real headless Chromium. ` +
  "Install Debian's package (apt-get update && apt-get install -y chromium; .ci/run does this), " +
  'or set RXKUBE_SKIP_BROWSER=1 to skip these suites on purpose.';

/** A suite that drives Chromium: it fails first thing, saying how to install it, when Chromium is missing. */
export function describeBrowser(title: string, body: (this: Mocha.Suite) => void): void {
  (skipOnPurpose ? describe.skip : describe)(title, function () {
    before(() => {
      if (!existsSync(chromiumPath)) throw new Error(missing);
    });
    body.call(this);
  });
}

/** Headless Chromium; the caller closes it (in an after hook or a finally). */
export function launchChromium(): Promise<Browser> {
  if (!existsSync(chromiumPath)) return Promise.reject(new Error(missing));
  // --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
  return chromium.launch({ executablePath: chromiumPath, headless: true, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
}
