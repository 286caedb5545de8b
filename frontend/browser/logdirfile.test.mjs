// `tensorboard --logdir some.pt.trace.json`: TensorBoard accepts a file and finds no run in it; the tab
// is there and says to pass the file's folder (not "No profile runs in this logdir").
import assert from 'node:assert/strict';
import {cpSync} from 'node:fs';
import {dirname, join} from 'node:path';
import {test} from 'node:test';
import {ROOT, openPanel, serveLogdir} from './harness.mjs';

// a real PyTorch trace (V100 ResNet-50, tests/data/pytorch's demo copy)
const NAME = 'worker0.1623143089861.pt.trace.json.gz';
let base;
let browser;

serveLogdir(
  'file',
  (logdir) => {
    const file = join(dirname(logdir), NAME); // the logdir TensorBoard is given: the file itself
    cpSync(join(ROOT, 'demo_logs', 'pytorch_resnet50_num_workers_0', NAME), file);
    return file;
  },
  (s) => ({base, browser} = s),
);

test('a logdir that is a profile file: the tab says to pass its folder', async () => {
  const {context, frame, errors} = await openPanel(browser, `${base}/#gpu_advisor`);
  const text = await (await frame.waitForSelector('#logdir-file')).textContent();
  assert.match(text, new RegExp(`^The logdir is a profile file, ${NAME.replaceAll('.', '\\.')}: `));
  assert.match(text, /Pass its folder: tensorboard --logdir /);
  assert.ok(!(await frame.textContent('body')).includes('No profile runs in this logdir'));
  assert.deepEqual(errors, []);
  await context.close();
});
