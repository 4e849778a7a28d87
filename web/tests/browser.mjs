// Debian's Chromium under playwright-core (no browser download): the flags the environment
// needs on a closed network, and a fresh profile per launch.
//
// A page served over HTTPS with the development CA's certificate (the gateway's
// --web-tls-dir) is trusted by pinning that certificate's key: WEB_SPKI (or `spki`) is the
// base64 SHA-256 of its SubjectPublicKeyInfo, given to Chromium as
// --ignore-certificate-errors-spki-list, so a certificate with that key (and no other) passes
// without an NSS database. Nothing else is trusted beyond the system's roots: no
// ignoreHTTPSErrors.
import { chromium } from "playwright-core";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const CHROMIUM = process.env.CHROMIUM_PATH || "/usr/bin/chromium";

// ``device``: a phone's viewport with touch ({ viewport, hasTouch, isMobile, deviceScaleFactor }).
export async function launch({ spki = process.env.WEB_SPKI || "", device = {} } = {}) {
  const profile = mkdtempSync(join(tmpdir(), "mahjong-chromium-"));
  const pins = spki ? [`--ignore-certificate-errors-spki-list=${spki}`] : [];
  return chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1360, height: 900 },
    ...device,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      ...pins,
    ],
  });
}
