// What the panel shows in place of a view: an analysis in progress, an error, an empty logdir.

import {el, shown} from '../dom';
import {RunsResponse} from '../schema.gen';

/** "Analysing …" while a route answers 202; with a bar, `set` shows the progress (0–1). */
export function progressView(text: string, bar = false): {element: HTMLElement; set: (progress: number) => void} {
  const label = el('p', {id: 'progress-label'}, text);
  const fill = el('div');
  fill.style.width = '0%';
  const element = el('div', {class: 'message', id: 'progress'}, label, bar && el('div', {class: 'progress'}, fill));
  const set = (progress: number) => {
    const p = Math.round(100 * progress);
    fill.style.width = `${p}%`;
    label.textContent = shown(`${text} ${p}%`);
  };
  return {element, set};
}

export function errorView(message: string): HTMLElement {
  return el('div', {class: 'message'}, el('p', {class: 'error', role: 'alert'}, message));
}

/** No runs in the logdir: where each framework writes its profiles, and why a run found was not read;
 * where the logdir is a profile file, to pass its folder. */
export function emptyView(legacy: RunsResponse['legacy'], logdirFile?: string): HTMLElement {
  return el(
    'div',
    {class: 'message'},
    logdirFile
      ? el(
          'p',
          {id: 'logdir-file'},
          `The logdir is a profile file, ${logdirFile}: TensorBoard reads runs from folders. Pass its folder: tensorboard --logdir <the folder that holds ${logdirFile}>.`,
        )
      : el('p', {}, 'No profile runs in this logdir.'),
    el(
      'p',
      {class: 'muted'},
      'TensorFlow and JAX write <logdir>/<run>/plugins/profile/<session>/<host>.xplane.pb: the Keras TensorBoard callback (profile_batch=(10, 15)) under log_dir/train, tf.profiler.experimental.start(logdir), jax.profiler.trace(logdir).',
    ),
    el(
      'p',
      {class: 'muted'},
      'PyTorch writes <logdir>/<run>/<worker>.<span>.pt.trace.json or .pt.trace.json.gz: torch.profiler.profile(on_trace_ready=torch.profiler.tensorboard_trace_handler(logdir/run)).',
    ),
    ...legacy.map((l) => el('p', {class: 'muted'}, `${l.run}: ${l.message}`)),
  );
}
