import { formatPence, html, type SafeHtml } from "./html";

export interface DaySpend {
  /** UTC midnight of the day, epoch ms. */
  dayStartMs: number;
  spendPence: number;
}

const WIDTH = 720;
const HEIGHT = 220;
const PAD = { top: 16, right: 12, bottom: 28, left: 56 };

/** A round axis maximum ≥ the largest value: 1, 2 or 5 × a power of ten (in pence). */
function niceMaxPence(maxPence: number): number {
  if (maxPence <= 10) return 10;
  const power = 10 ** Math.floor(Math.log10(maxPence));
  for (const step of [1, 2, 5, 10]) if (step * power >= maxPence) return step * power;
  return 10 * power;
}

function dayLabel(ms: number): string {
  return new Date(ms).toLocaleDateString("en-GB", { day: "numeric", month: "short", timeZone: "UTC" });
}

/**
 * Daily spend as an inline SVG bar chart: no script, no library, no request. Each bar has a
 * tooltip, and the same figures follow in a table for screen readers and keyboard users.
 */
export function dailySpendChart(days: DaySpend[], captionId: string): SafeHtml {
  const maxPence = niceMaxPence(Math.max(0, ...days.map((d) => d.spendPence)));
  const plotWidth = WIDTH - PAD.left - PAD.right;
  const plotHeight = HEIGHT - PAD.top - PAD.bottom;
  const slot = plotWidth / Math.max(1, days.length);
  const barWidth = Math.max(2, slot * 0.7);
  const y = (pence: number) => PAD.top + plotHeight - (pence / maxPence) * plotHeight;
  const ticks = [0, maxPence / 2, maxPence];
  const labelEvery = Math.max(1, Math.ceil(days.length / 6));
  return html`<svg viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-labelledby="${captionId}" focusable="false">
    ${ticks.map((t) => html`<line class="axis" x1="${PAD.left}" x2="${WIDTH - PAD.right}" y1="${y(t)}" y2="${y(t)}" stroke-dasharray="${t === 0 ? "" : "3 4"}" stroke-width="1"></line>
      <text x="${PAD.left - 8}" y="${y(t) + 4}" text-anchor="end">${formatPence(Math.round(t))}</text>`)}
    ${days.map((d, i) => {
      const x = PAD.left + i * slot + (slot - barWidth) / 2;
      const height = Math.max(0, y(0) - y(d.spendPence));
      return html`<rect class="bar" x="${x.toFixed(1)}" y="${(y(0) - height).toFixed(1)}" width="${barWidth.toFixed(1)}" height="${height.toFixed(1)}" rx="2"><title>${dayLabel(d.dayStartMs)}: ${formatPence(d.spendPence)}</title></rect>
        ${i % labelEvery === 0 || i === days.length - 1 ? html`<text x="${(PAD.left + i * slot + slot / 2).toFixed(1)}" y="${HEIGHT - 8}" text-anchor="middle">${dayLabel(d.dayStartMs)}</text>` : ""}`;
    })}
  </svg>`;
}
