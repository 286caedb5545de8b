// The headline: GPU busy share, op time on the GPU, 16-bit share, each judged good / moderate / bad by
// the report, with how it is measured on hover; per GPU, busy share beside compute per step and the
// PyTorch plugin's kernel figures (n/a with the reason where the trace lacks what they need).

import {el} from '../dom';
import {fmtDuration, fmtPct} from '../format';
import {KERNEL_FIGURES, figuresNote, missingNotes, missingReason} from '../kernelfigures';
import {Judgement, Report} from '../schema.gen';
import {card} from './common';

export function headlineView(r: Report, definitions: Record<string, string>): HTMLElement {
  const h = r.headline;
  const c = card('headline', 'Headline');
  if (!h) return c;
  const kpi = (key: 'device_busy_pct' | 'device_op_time_pct' | 'fp16_compute_pct', label: string, id: string) => {
    const value = h[key];
    const judged: Judgement = h.judged[key];
    const meter = el('div');
    meter.style.width = `${Math.max(0, Math.min(100, value ?? 0))}%`;
    return el(
      'div',
      {class: 'kpi', id, 'data-judged': judged ?? 'none', title: definitions[key] ?? ''},
      el('div', {class: 'v'}, fmtPct(value)),
      el('div', {class: 'l'}, label, ' ', el('span', {class: 'info', 'aria-hidden': 'true'}, '?')),
      el('div', {class: 'meter'}, meter),
      el('div', {class: 'judged'}, judged ?? (value === null ? 'not measured' : 'not judged')),
    );
  };
  c.appendChild(
    el(
      'div',
      {class: 'headline'},
      kpi('device_busy_pct', 'of step time the GPU is busy', 'kpi-busy'),
      kpi('device_op_time_pct', 'of op time placed on the GPU', 'kpi-ops'),
      kpi('fp16_compute_pct', 'of device compute in 16-bit', 'kpi-fp16'),
    ),
  );
  const sm = r.step_model;
  if (sm) {
    // the step as its graph re-times it without the profiler, and every finding's fix at once
    const bound = {
      GPU: 'the GPU sets the step',
      host: 'the host sets the step',
      input: 'waiting for input sets the step',
    };
    const parts: (string | HTMLElement)[] = [
      `Without the profiler: ${fmtDuration(sm.step_ms)} a step (${fmtDuration(sm.captured_step_ms)} captured, `,
      `the profiler ${fmtPct(sm.profiler_pct)} of it); ${bound[sm.bound]}.`,
    ];
    if (sm.all && sm.findings.length > 1)
      parts.push(
        ` Every fix below together: ${fmtDuration(sm.all.step_ms)} → ${fmtDuration(sm.all.new_step_ms)} a step`,
        ' (simulated at once, so the savings do not add up).',
      );
    c.appendChild(el('p', {class: 'step-model', title: sm.all?.basis ?? ''}, ...parts));
  }
  if (h.per_gpu.length) {
    const th = (text: string, key?: string) =>
      el('th', {class: 'num', title: key ? (definitions[key] ?? '') : ''}, text);
    const t = el(
      'table',
      {class: 'per-gpu'},
      el(
        'tr',
        {},
        el('th', {}, 'GPU'),
        th('busy', 'device_busy_pct'),
        th('compute / step', 'compute_ms_per_step'),
        th('step', 'step_ms'),
        th('16-bit', 'fp16_compute_pct'),
        th('kernels'),
        ...KERNEL_FIGURES.map(({key, label}) => th(label, key)),
      ),
    );
    for (const g of h.per_gpu) {
      const device = r.devices.find((d) => d.id === g.device_id);
      const figures = KERNEL_FIGURES.map(({key}) => {
        const why = missingReason(key, g[key], device);
        const title = why ? `n/a: ${why}. ${definitions[key] ?? ''}` : (definitions[key] ?? '');
        return el('td', {class: 'num', 'data-key': key, title}, fmtPct(g[key]));
      });
      t.appendChild(
        el(
          'tr',
          {'data-gpu': g.device_id},
          el('td', {}, `GPU ${g.device_id}`),
          el('td', {class: 'num'}, fmtPct(g.device_busy_pct)),
          el('td', {class: 'num'}, fmtDuration(g.compute_ms_per_step)),
          el('td', {class: 'num'}, fmtDuration(g.step_ms)),
          el('td', {class: 'num'}, fmtPct(g.fp16_compute_pct)),
          el('td', {class: 'num'}, g.kernels),
          ...figures,
        ),
      );
    }
    c.appendChild(t);
    if (h.per_gpu.length > 1)
      c.appendChild(
        el(
          'p',
          {class: 'muted'},
          'Busy counts collectives and copies too: a GPU waiting in an all-reduce is busy. Compute per step shows how much work each GPU has.',
        ),
      );
    c.appendChild(el('p', {class: 'muted'}, figuresNote(r.framework)));
    for (const line of missingNotes(h.per_gpu, r.devices)) c.appendChild(el('p', {class: 'muted kernel-na'}, line));
  }
  const idle = [...h.idle_gpus, ...h.copy_only_gpus];
  if (idle.length)
    c.appendChild(el('p', {class: 'muted'}, `Not counted: GPU ${idle.join(', GPU ')} (no kernels in the capture).`));
  return c;
}
