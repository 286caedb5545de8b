// Data loading: the plugin's routes fetched for the panel, an analysis asked again while it runs (the
// route answers 202 with its progress until it is done), and errors in the user's words. A load
// started for a view the user has since left is dropped: each carries the token of its view.

import {errorMessage, getJson} from './api';
import {CatalogueResponse, Diff, EventResponse, Report, RunReports, RunsResponse, TimelineResponse} from './schema.gen';
import {TimeWindow} from './scale';

// the server holds each ask this long when the analysis is not done
const POLL_WAIT_S = 2;

export type Loaded<T> = {ok: true; body: T} | {ok: false; status: number; message: string};

type Params = Record<string, string | number | undefined>;

export class Loader {
  private token = 0;

  /** A new view: loads for the one before it are dropped. */
  begin(): number {
    return ++this.token;
  }

  isCurrent(token: number): boolean {
    return token === this.token;
  }

  /** A route asked until it answers (200 or an error); `pending` hears the progress (0–1) of each 202.
   * Null when the view was left meanwhile. */
  async poll<T>(token: number, route: string, params: Params, pending?: (progress: number) => void) {
    for (;;) {
      const res = await getJson<T & {progress?: number}>(route, {...params, wait: POLL_WAIT_S});
      if (!this.isCurrent(token)) return null;
      if (res.status === 202) {
        pending?.(res.body.progress ?? 0);
        continue;
      }
      const out: Loaded<T> =
        res.status === 200
          ? {ok: true, body: res.body}
          : {ok: false, status: res.status, message: errorMessage(res.body)};
      return out;
    }
  }

  /** One host's report. */
  report(token: number, run: string, host: string, pending: (progress: number) => void) {
    return this.poll<Report>(token, 'report', {run, host}, pending);
  }

  /** Every host of a run (one profiling cycle of a job), compared. */
  runReports(token: number, run: string, cycle?: string) {
    return this.poll<RunReports>(token, 'report', {run, cycle});
  }

  /** A run against the run before a change, every check listed (the view shows the unchanged on request). */
  compare(token: number, run: string, host: string, baseRun: string, baseHost: string) {
    return this.poll<Diff>(token, 'compare', {run, host, base_run: baseRun, base_host: baseHost, all_checks: '1'});
  }
}

/** The runs of the logdir and the catalogue of checks (null when it could not be had). */
export async function loadRuns(): Promise<{runs: Loaded<RunsResponse>; checks: CatalogueResponse | null}> {
  const [runs, checks] = await Promise.all([getJson<RunsResponse>('runs'), getJson<CatalogueResponse>('checks')]);
  return {
    runs:
      runs.status === 200
        ? {ok: true, body: runs.body}
        : {ok: false, status: runs.status, message: errorMessage(runs.body)},
    checks: checks.status === 200 ? checks.body : null,
  };
}

/** The runs again: each host's status is known once it is analysed (null if the route failed). */
export async function reloadRuns(): Promise<RunsResponse | null> {
  const res = await getJson<RunsResponse>('runs');
  return res.status === 200 ? res.body : null;
}

/** The timeline's rows for a window, at `width` pixels. */
export async function timelineWindow(run: string, host: string, w: TimeWindow, width: number) {
  const res = await getJson<TimelineResponse>('timeline', {run, host, start_ms: w.start, end_ms: w.end, width});
  return res.status === 200 ? res.body : null;
}

/** The event under the cursor on a row of the timeline. */
export async function eventAt(run: string, host: string, track: string, t: number, tolerance: number) {
  const res = await getJson<EventResponse>('event', {run, host, track, t_ms: t, tolerance_ms: tolerance});
  return res.status === 200 ? res.body : null;
}
