// A live line chart in SVG: the last `points` values, scaled to the largest.
import { s } from './dom.js';

export class LineChart {
  constructor(label, points = 60) {
    this.points = points;
    this.area = s('path', { class: 'area' });
    this.line = s('path', { class: 'line' });
    this.el = s('svg', { viewBox: `0 0 ${points - 1} 40`, preserveAspectRatio: 'none', role: 'img', 'aria-label': label },
      s('title', {}, label), this.area, this.line);
  }

  update(values) {
    const recent = values.slice(-this.points);
    const offset = this.points - recent.length;
    const max = Math.max(1e-9, ...recent.map((v) => v ?? 0));
    const y = (v) => (38 - ((v ?? 0) / max) * 36).toFixed(2);
    const xy = recent.map((v, i) => `${i + offset},${y(v)}`);
    if (xy.length === 0) { this.line.setAttribute('d', ''); this.area.setAttribute('d', ''); return; }
    this.line.setAttribute('d', 'M' + xy.join(' L'));
    this.area.setAttribute('d', `M${offset},40 L` + xy.join(' L') + ` L${this.points - 1},40 Z`);
  }
}
