import assert from 'node:assert/strict';
import {test} from 'node:test';
import {AcrossHosts, HostSummary} from '../src/schema.gen';
import {collectiveTimeChecks, cycleLabel, jobWaitText, shownReports, sortJobRows, waitText} from '../src/views/hosts';
import {CatalogueEntry} from '../src/schema.gen';

const report = (host: string, failure: string | null = null) => ({host, failure}) as unknown as HostSummary;

test("a job's table lists its ranks in the picked cycle, and unreadable files; other cycles are not peers", () => {
  // two ranks over two profiling cycles, the second picked; one file of a third cycle could not be read
  const reports = [
    report('vm_1.100'),
    report('vm_1.200'),
    report('vm_2.100'),
    report('vm_2.200'),
    report('vm_2.300', 'unreadable'),
  ];
  const across = {ranks: [{host: 'vm_1.200'}, {host: 'vm_2.200'}]} as unknown as AcrossHosts;
  assert.deepEqual(
    shownReports(reports, across).map((r) => r.host),
    ['vm_1.200', 'vm_2.200', 'vm_2.300'],
  );
  // a run that is not a job (one host, one cycle): every report
  assert.equal(shownReports(reports, undefined).length, 5);
});

test('the rank table sorts by a column, ties and missing values after in rank order; cycles are labelled', () => {
  const row = (rank: number, compute: number | null, status = 'pass') =>
    ({rank, host: `h${rank}`, compute_ms: compute, status}) as unknown as Parameters<typeof sortJobRows>[0][number];
  const rows = [row(0, 19.6), row(1, null, 'warning'), row(2, 29.4, 'critical'), row(3, 19.6)];
  const ranks = (key: Parameters<typeof sortJobRows>[1], desc: boolean) =>
    sortJobRows(rows, key, desc).map((r) => r.rank);
  assert.deepEqual(ranks('compute_ms', true), [2, 0, 3, 1]);
  assert.deepEqual(ranks('compute_ms', false), [0, 3, 2, 1]);
  assert.deepEqual(ranks('status', true), [2, 1, 0, 3]); // the worst first
  assert.deepEqual(ranks('rank', false), [0, 1, 2, 3]);
  const across = {
    cycles: 3,
    ranks_captured: 8,
    cycle_ranks: [
      {files: 8, with_steps: 8},
      {files: 8, with_steps: 8},
      {files: 8, with_steps: 0},
    ],
  } as unknown as AcrossHosts;
  assert.equal(cycleLabel(across, 0), 'cycle 1 of 3 · 8 ranks');
  assert.equal(cycleLabel(across, 2), 'cycle 3 of 3 · 0 of 8 ranks with a step');
});

test("a rank's all-reduce finding says how much of it is waiting for the straggler", () => {
  // the catalogue says which checks read collective time (@check(collective_time=True)); the panel has no list
  const catalogue = [
    {id: 'input.bound', collective_time: false},
    {id: 'allreduce.cost', collective_time: true},
  ] as CatalogueEntry[];
  const ct = collectiveTimeChecks(catalogue);
  assert.deepEqual(ct, ['allreduce.cost']);
  assert.equal(waitText({wait_ms: 3.8, worst_id: 'allreduce.cost'}, ct), ' (3.80 ms of it waiting for the straggler)');
  assert.equal(waitText({wait_ms: 3.8, worst_id: 'input.bound'}, ct), ''); // a finding not about collective time
  assert.equal(waitText({wait_ms: null, worst_id: 'allreduce.cost'}, ct), ''); // no straggler, or the straggler
  assert.equal(waitText({wait_ms: 0, worst_id: 'allreduce.cost'}, ct), '');
  assert.equal(waitText({wait_ms: 3.8, worst_id: 'allreduce.cost'}, []), ''); // no catalogue: nothing said
});

test("a rank's page is told the wait for the straggler in the CLI's words", () => {
  const runs = [
    {
      ranks: [
        {host: 'gpu-worker-0', label: 'gpu-worker-0', straggler: false, straggler_wait_ms: 3.8},
        {host: 'gpu-worker-1', label: 'gpu-worker-1', straggler: true, straggler_wait_ms: null},
      ],
    },
  ] as unknown as AcrossHosts[];
  assert.equal(
    jobWaitText(runs, 'gpu-worker-0'),
    'In the job: 3.80 ms of it per step is waiting for the straggler gpu-worker-1 (job.straggler): fix that first.',
  );
  assert.equal(jobWaitText(runs, 'gpu-worker-1'), ''); // the straggler waits for no one
  assert.equal(jobWaitText(runs, 'elsewhere'), '');
});
