import assert from 'node:assert/strict';
import {test} from 'node:test';
import {figuresNote, kernelFiguresLine, missingNotes, missingReason} from '../src/kernelfigures';
import {Device} from '../src/schema.gen';

const gpu = (id: number, sm_count: number | null): Device => ({
  id,
  name: 'GPU',
  vendor: 'NVIDIA',
  architecture: null,
  compute_capability: null,
  sm_count,
  clock_mhz: null,
  memory_gib: null,
  memory_bandwidth_gbps: null,
});

test('the line reads as the text report does (render.kernel_figures), n/a where unknown', () => {
  assert.equal(
    kernelFiguresLine({gpu_utilization_pct: 55.514, sm_efficiency_pct: 54.679, achieved_occupancy_pct: null}),
    'kernels running 55.5% · est. SM efficiency 54.7% · est. achieved occupancy n/a',
  );
});

test('an n/a figure says why, from what the report says of the GPU', () => {
  assert.equal(missingReason('sm_efficiency_pct', 12.5, gpu(0, null)), '');
  assert.equal(
    missingReason('sm_efficiency_pct', null, gpu(0, null)),
    "the trace gives neither the GPU's SM count nor its kernels' blocks per SM",
  );
  assert.equal(
    missingReason('sm_efficiency_pct', null, undefined),
    "the trace gives neither the GPU's SM count nor its kernels' blocks per SM",
  );
  assert.equal(missingReason('sm_efficiency_pct', null, gpu(0, 80)), 'no kernel in the trace gives its grid size');
  assert.equal(
    missingReason('achieved_occupancy_pct', NaN, gpu(0, 80)),
    'no kernel in the trace gives its achieved occupancy',
  );
  assert.equal(missingReason('gpu_utilization_pct', null, gpu(0, 80)), 'no steps to measure in');
  assert.equal(missingReason('gpu_utilization_pct', 0, gpu(0, 80)), '');
});

test('the notes name each figure and reason once, with its GPUs', () => {
  const row = (device_id: number, sm: number | null, occ: number | null) => ({
    device_id,
    gpu_utilization_pct: 70,
    sm_efficiency_pct: sm,
    achieved_occupancy_pct: occ,
  });
  assert.deepEqual(missingNotes([row(4, 70, null), row(6, 69, null)], [gpu(4, 80), gpu(6, 80)]), [
    'est. achieved occupancy n/a on GPU 4, GPU 6: no kernel in the trace gives its achieved occupancy.',
  ]);
  assert.deepEqual(missingNotes([row(0, null, 50), row(1, null, 50)], [gpu(0, null), gpu(1, 108)]), [
    "est. SM efficiency n/a on GPU 0: the trace gives neither the GPU's SM count nor its kernels' blocks per SM.",
    'est. SM efficiency n/a on GPU 1: no kernel in the trace gives its grid size.',
  ]);
  assert.deepEqual(missingNotes([row(0, 1, 2)], [gpu(0, 108)]), []);
});

test("the note names PyTorch's plugin on PyTorch runs only", () => {
  assert.match(figuresNote('pytorch'), /computed as the PyTorch profiler plugin computes them, over the steps/);
  for (const framework of ['tensorflow', 'jax', 'unknown', undefined]) {
    const note = figuresNote(framework);
    assert.ok(!note.includes('PyTorch'), note);
    assert.match(
      note,
      /^Kernels running, est\. SM efficiency and est\. achieved occupancy are measured over the steps; hover/,
    );
  }
});
