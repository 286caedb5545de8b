// The panel's style sheet, and TensorBoard's dark mode followed.

import {parentWindow} from './router';
import {CSS} from './style';

/** Adds the style sheet; calls `onDark` now and whenever TensorBoard turns dark mode on or off. */
export function applyTheme(onDark: (dark: boolean) => void): void {
  const style = document.createElement('style');
  style.textContent = CSS;
  document.head.appendChild(style);
  const top = parentWindow();
  const apply = () => {
    const dark = !!top && top.document.body.classList.contains('dark-mode');
    document.body.classList.toggle('dark', dark);
    onDark(dark);
  };
  apply();
  if (top) new MutationObserver(apply).observe(top.document.body, {attributes: true, attributeFilter: ['class']});
}
