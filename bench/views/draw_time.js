// draw_time.js -- how long Debian's Chromium (driven by npm playwright-core)
// takes to open a file and draw it: from the start of navigation to the
// second animation frame after the load event (the first screen painted),
// and a screenshot of that screen beside the file (FILE.png).
//
// Usage: node draw_time.js PLAYWRIGHT_CORE_DIR CHROMIUM FILE
// Prints one JSON line: {"ms": N}.
"use strict";

const [pwDir, chromiumPath, file] = process.argv.slice(2);
const { chromium } = require(pwDir);
// As tests/browser/browser_agent.js: closed network, root, no GPU.
const ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
              "--disable-background-networking", "--disable-component-update", "--disable-sync"];

(async () => {
  const browser = await chromium.launch({ executablePath: chromiumPath, args: ARGS });
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const t0 = Date.now();
  await page.goto("file://" + file, { waitUntil: "load", timeout: 300000 });
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  const ms = Date.now() - t0;
  await page.screenshot({ path: file + ".png" });
  process.stdout.write(JSON.stringify({ ms }) + "\n");
  await browser.close();
})().catch((e) => {
  process.stderr.write(String(e && e.stack || e) + "\n");
  process.exit(1);
});
