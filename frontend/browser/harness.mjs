// What the browser tests share: a real TensorBoard process, Debian's Chromium, the panel's frame.
import {spawn} from 'node:child_process';
import {mkdirSync, mkdtempSync, rmSync} from 'node:fs';
import {createServer} from 'node:net';
import {tmpdir} from 'node:os';
import {dirname, join, resolve} from 'node:path';
import {after, before} from 'node:test';
import {fileURLToPath} from 'node:url';
import {chromium} from 'playwright-core';

const HERE = dirname(fileURLToPath(import.meta.url));
export const ROOT = resolve(HERE, '..', '..');
export const PYTHON = process.env.PYTHON ?? join(ROOT, '.venv', 'bin', 'python');
export const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
// `make screenshots` points this at docs/screenshots, the README's pictures
export const SHOTS = process.env.SCREENSHOTS ?? join(ROOT, 'artifacts', 'screenshots');

export function freePort() {
  return new Promise((ok, fail) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const {port} = s.address();
      s.close(() => ok(port));
    });
    s.on('error', fail);
  });
}

export async function waitFor(fn, ms = 60000, what = 'condition') {
  const end = Date.now() + ms;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch {
      // not yet
    }
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** A real `tensorboard` on a free loopback port; `base` includes the path prefix. `onlyOurs`: with
 * TensorBoard's own plugins and ours only (scripts/tensorboard_ours.py), for logdirs of many PyTorch
 * traces, on which torch-tb-profiler starts a process per file. */
export async function startTensorBoard(logdir, {prefix = '', onlyOurs = false} = {}) {
  const port = await freePort();
  const main = onlyOurs ? [join(ROOT, 'scripts', 'tensorboard_ours.py')] : ['-m', 'tensorboard.main'];
  const args = [...main, '--logdir', logdir, '--host', '127.0.0.1', '--port', String(port)];
  args.push('--load_fast', 'false');
  if (prefix) args.push('--path_prefix', prefix);
  const proc = spawn(PYTHON, args, {stdio: 'ignore'});
  const base = `http://127.0.0.1:${port}${prefix}`;
  await waitFor(async () => (await fetch(`${base}/data/plugins_listing`)).ok, 120000, 'tensorboard');
  return {proc, base};
}

/** A test file's TensorBoard and browser. Before its tests: a scratch logdir (`logs` in a new temporary
 * folder named after `name`; `fill(logdir)` writes it, and may return another path in that folder to
 * serve instead), a real TensorBoard on it (`options` as startTensorBoard's) and Chromium, given to
 * `ready({logdir, base, browser})`. After them: the browser closed, TensorBoard stopped, the folder
 * removed. */
export function serveLogdir(name, fill, ready, options = {}) {
  let dir;
  let proc;
  let browser;
  before(async () => {
    mkdirSync(SHOTS, {recursive: true});
    dir = mkdtempSync(join(tmpdir(), `gpu-advisor-${name}-`));
    const logdir = (await fill(join(dir, 'logs'))) ?? join(dir, 'logs');
    let base;
    ({proc, base} = await startTensorBoard(logdir, options));
    browser = await launchBrowser();
    await ready({logdir, base, browser});
  });
  after(async () => {
    await browser?.close();
    proc?.kill();
    if (dir) rmSync(dir, {recursive: true, force: true});
  });
}

export function launchBrowser() {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-quic',
    ],
  });
}

/** A new page on `url` and the panel's frame in it; page errors and dialogs are collected. */
export async function openPanel(browser, url, viewport = {width: 1280, height: 800}) {
  const context = await browser.newContext({viewport});
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('dialog', (d) => {
    errors.push(`dialog: ${d.message()}`);
    void d.dismiss();
  });
  await page.goto(url);
  const frame = await waitFor(
    () => page.frames().find((f) => f.url().includes('plugin_entry.html?name=gpu_advisor')),
    60000,
    'panel frame',
  );
  return {context, page, frame, errors};
}

export function hashFor(state) {
  const parts = ['gpu_advisor'];
  for (const [k, v] of Object.entries(state)) parts.push(`p.gpu_advisor.${k}=${encodeURIComponent(v)}`);
  return '#' + parts.join('&');
}

export async function getJson(base, route, params) {
  const q = new URLSearchParams(params).toString();
  const r = await fetch(`${base}/data/plugin/gpu_advisor/${route}?${q}`);
  if (r.status !== 200) throw new Error(`${route}: ${r.status}`);
  return r.json();
}
