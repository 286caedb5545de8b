// The PyTorch plugin's kernel figures (analysis.kernel_efficiency): their labels, the text a GPU or a
// step shows, and why one is n/a, told from what the report says of the GPU. Pure functions, unit-tested.

import {fmtPct} from './format';
import {Device} from './schema.gen';

export const KERNEL_FIGURES = [
  {key: 'gpu_utilization_pct', label: 'kernels running'},
  {key: 'sm_efficiency_pct', label: 'est. SM efficiency'},
  {key: 'achieved_occupancy_pct', label: 'est. achieved occupancy'},
] as const;

export type KernelFigureKey = (typeof KERNEL_FIGURES)[number]['key'];
export type KernelFigures = Record<KernelFigureKey, number | null>;

const known = (v: number | null | undefined): v is number => v !== null && v !== undefined && Number.isFinite(v);

/** Why a GPU's figure is n/a ('' when it is known); `device` is the report's device of that id. */
export function missingReason(key: KernelFigureKey, value: number | null | undefined, device?: Device): string {
  if (known(value)) return '';
  if (key === 'sm_efficiency_pct')
    return device && device.sm_count
      ? 'no kernel in the trace gives its grid size'
      : "the trace gives neither the GPU's SM count nor its kernels' blocks per SM";
  if (key === 'achieved_occupancy_pct') return 'no kernel in the trace gives its achieved occupancy';
  return 'no steps to measure in';
}

/** "kernels running 55.5% · est. SM efficiency 54.7% · est. achieved occupancy 49.1%", as the text report. */
export function kernelFiguresLine(f: KernelFigures): string {
  return KERNEL_FIGURES.map(({key, label}) => `${label} ${fmtPct(f[key])}`).join(' · ');
}

/** One line per figure and reason it is n/a, naming its GPUs: "est. achieved occupancy n/a on GPU 4,
 * GPU 6: no kernel in the trace gives its achieved occupancy." */
export function missingNotes(perGpu: (KernelFigures & {device_id: number})[], devices: Device[]): string[] {
  const lines: string[] = [];
  for (const {key, label} of KERNEL_FIGURES) {
    const byReason = new Map<string, number[]>();
    for (const g of perGpu) {
      const why = missingReason(
        key,
        g[key],
        devices.find((d) => d.id === g.device_id),
      );
      if (why) byReason.set(why, [...(byReason.get(why) ?? []), g.device_id]);
    }
    for (const [why, gpus] of byReason) lines.push(`${label} n/a on GPU ${gpus.join(', GPU ')}: ${why}.`);
  }
  return lines;
}

/** The note under a report's per-GPU table. Only PyTorch users know PyTorch's plugin, so only their
 * runs are told the figures are its. */
export function figuresNote(framework: string | undefined): string {
  const how = framework === 'pytorch' ? 'computed as the PyTorch profiler plugin computes them,' : 'measured';
  return `Kernels running, est. SM efficiency and est. achieved occupancy are ${how} over the steps; hover a column for how.`;
}
