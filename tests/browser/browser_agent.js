// browser_agent.js -- one headless Chromium (Debian's, driven by npm
// playwright-core) that a Python test driver steers over stdin/stdout, one
// JSON object per line each way, so that a whole test file shares one launch.
//
// Usage: node browser_agent.js PLAYWRIGHT_CORE_DIR CHROMIUM USER_DATA_DIR
// Request:  {"id": N, "op": NAME, ...arguments}
// Reply:    {"id": N, "ok": true, "result": ...} or {"id": N, "ok": false,
//           "error": message}
// Ops: page {width, height} (a new page; the previous one is closed),
//   viewport {width, height}, goto {url, wait} ("load" by default),
//   eval {fn, arg} (fn: the source of a function of one argument, run in
//   the page; its JSON result), wait_for {fn, arg, timeout} (until fn
//   returns something truthy, which is returned), move {x, y},
//   click {x, y}, key {key} (e.g. "Control+f", "Escape"), answer {text}
//   (the reply to the next prompt() dialogs; null dismisses them),
//   dialogs (the dialogs seen so far: [{type, message}], cleared),
//   log (console messages and page errors so far, cleared: [{type, text}],
//   type being console's or "pageerror"), screenshot {path, full},
//   quit.
"use strict";

const readline = require("readline");
const [pwDir, chromiumPath, userDataDir] = process.argv.slice(2);
if (!userDataDir) {
  process.stderr.write("usage: node browser_agent.js PLAYWRIGHT_CORE_DIR CHROMIUM USER_DATA_DIR\n");
  process.exit(2);
}
const { chromium } = require(pwDir);

// The flags that make Chromium work on this machine (closed network, root,
// no GPU): docs/output-formats.md section E.
const ARGS = [
  "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
  "--disable-background-networking", "--disable-component-update", "--disable-sync",
];

let context = null, page = null, answer = null;
let log = [], dialogs = [];

async function newPage(a) {
  if (page) await page.close();
  page = await context.newPage();
  await page.setViewportSize({ width: a.width || 1200, height: a.height || 800 });
  page.on("console", (m) => log.push({ type: m.type(), text: m.text() }));
  page.on("pageerror", (e) => log.push({ type: "pageerror", text: String(e && e.stack || e) }));
  page.on("crash", () => log.push({ type: "pageerror", text: "page crashed" }));
  page.on("dialog", async (d) => {
    dialogs.push({ type: d.type(), message: d.message() });
    if (d.type() === "prompt" && answer !== null) await d.accept(answer);
    else await d.dismiss();
  });
  return true;
}

function call(fn, arg) {
  return "(" + fn + ")(" + JSON.stringify(arg === undefined ? null : arg) + ")";
}

const ops = {
  page: newPage,
  viewport: (a) => page.setViewportSize({ width: a.width, height: a.height }).then(() => true),
  goto: async (a) => {
    const r = await page.goto(a.url, { waitUntil: a.wait || "load", timeout: 30000 });
    return r ? r.status() : null;
  },
  eval: (a) => page.evaluate(call(a.fn, a.arg)),
  wait_for: async (a) => {
    const h = await page.waitForFunction(call(a.fn, a.arg), null,
                                         { timeout: a.timeout || 10000, polling: 50 });
    return h.jsonValue();
  },
  move: (a) => page.mouse.move(a.x, a.y).then(() => true),
  click: (a) => page.mouse.click(a.x, a.y).then(() => true),
  key: (a) => page.keyboard.press(a.key).then(() => true),
  answer: (a) => { answer = a.text; return true; },
  dialogs: () => { const d = dialogs; dialogs = []; return d; },
  log: () => { const l = log; log = []; return l; },
  screenshot: (a) => page.screenshot({ path: a.path, fullPage: !!a.full }).then(() => true),
};

async function main() {
  context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: chromiumPath, headless: true, args: ARGS,
    viewport: { width: 1200, height: 800 },
  });
  const send = (o) => process.stdout.write(JSON.stringify(o) + "\n");
  send({ id: 0, ok: true, result: "ready" });
  const rl = readline.createInterface({ input: process.stdin });
  for await (const line of rl) {
    if (!line.trim()) continue;
    let req;
    try { req = JSON.parse(line); } catch (e) { send({ id: null, ok: false, error: "bad JSON" }); continue; }
    if (req.op === "quit") break;
    try {
      if (!ops[req.op]) throw new Error("unknown op " + req.op);
      const result = await ops[req.op](req);
      send({ id: req.id, ok: true, result: result === undefined ? null : result });
    } catch (e) {
      send({ id: req.id, ok: false, error: String(e && e.message || e) });
    }
  }
  await context.close();
}

main().then(() => process.exit(0), (e) => {
  process.stderr.write("browser_agent: " + (e && e.stack || e) + "\n");
  process.exit(1);
});
