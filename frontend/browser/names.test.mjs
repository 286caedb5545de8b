// Names that would show as others (issue 38): a run named with a right-to-left override and a bell,
// a host with a left-to-right isolate (tests/support/hostile_profile.py --rtl). The panel shows their control
// and bidirectional characters escaped, as the command does ("rtl_\u202egpj.exe" read "rtl_ssap ·
// exe.jpg" in the run picker), and keeps the exact names where it asks the server.
import assert from 'node:assert/strict';
import {execFileSync} from 'node:child_process';
import {join} from 'node:path';
import {test} from 'node:test';
import {PYTHON, ROOT, SHOTS, hashFor, openPanel, serveLogdir} from './harness.mjs';

const RUN = 'rtl_\u202egpj.exe\x07';
const HOST = 'host\u2066x';
const SHOWN_RUN = 'rtl_\\u202egpj.exe\\x07';
const SHOWN_HOST = 'host\\u2066x';
// what a browser must not be given to lay out: the controls themselves
const HIDDEN = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/;

let base;
let browser;

serveLogdir(
  'names',
  (logdir) => {
    execFileSync(PYTHON, [join(ROOT, 'tests', 'support', 'hostile_profile.py'), logdir, '--rtl']);
  },
  (s) => ({base, browser} = s),
  {onlyOurs: true},
);

test('right-to-left and control characters in names are shown escaped', async () => {
  const {context, page, frame, errors} = await openPanel(browser, `${base}/${hashFor({run: RUN, host: HOST})}`);
  await frame.waitForSelector('.finding', {timeout: 60000});
  // the pickers: the labels escaped, the values exact (what the panel asks the server for)
  const options = await frame.$$eval('#run-select option, #host-select option', (os) =>
    os.map((o) => ({text: o.textContent, value: o.value})),
  );
  const run = options.find((o) => o.value === RUN);
  assert.ok(run, JSON.stringify(options));
  assert.ok(run.text.startsWith(SHOWN_RUN), run.text);
  const host = options.find((o) => o.value === HOST);
  assert.ok(host && host.text.startsWith(SHOWN_HOST), JSON.stringify(options));
  assert.equal(await frame.$eval('#run-select', (n) => n.value), RUN);
  // nowhere in the panel a control character to lay out, and the names as the command shows them
  const text = await frame.evaluate(() => document.querySelector('#gpu-advisor').innerText);
  assert.equal(HIDDEN.exec(text), null, JSON.stringify(HIDDEN.exec(text)?.[0]));
  const titles = await frame.$$eval('[title], [aria-label]', (ns) =>
    ns.map((n) => `${n.getAttribute('title') ?? ''} ${n.getAttribute('aria-label') ?? ''}`).join(' '),
  );
  assert.equal(HIDDEN.exec(titles), null);
  await page.screenshot({path: join(SHOTS, '11-names-escaped.png')});
  assert.deepEqual(errors, []);
  await context.close();
});

test("the overview's table shows the names escaped", async () => {
  const {context, frame, errors} = await openPanel(browser, `${base}/#gpu_advisor`);
  const cell = await frame.waitForSelector('.run-row .run-name', {timeout: 60000});
  assert.equal(await cell.evaluate((n) => n.textContent), SHOWN_RUN);
  assert.equal(await frame.$eval('.run-row', (n) => n.dataset.run), RUN);
  assert.deepEqual(errors, []);
  await context.close();
});
