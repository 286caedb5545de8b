import assert from 'node:assert/strict';
import {test} from 'node:test';
import {AcrossHosts, HostSummary} from '../src/schema.gen';
import {shownReports} from '../src/views/hosts';

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
