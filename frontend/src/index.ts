// Entry point: TensorBoard imports this module into the tab's iframe and calls render().
import {App} from './app';

export async function render(): Promise<void> {
  const root = document.createElement('div');
  root.id = 'gpu-advisor';
  document.body.appendChild(root);
  await new App(root).start();
}
