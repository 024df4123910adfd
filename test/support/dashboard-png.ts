// Renders a Grafana dashboard's panels from a Prometheus's range queries as one PNG (SVG line
// charts in a page, screenshotted by Chromium): the stand-in for Grafana screenshots where no
// Grafana can be installed. Used by test/observability/prometheus-alerts.test.ts with MCP_TASKS_DASHBOARD_PNG.
import { chromium } from 'playwright-core';

interface Panel {
  readonly title: string;
  readonly targets: readonly { readonly expr: string; readonly legendFormat: string }[];
}

interface Series {
  readonly label: string;
  readonly points: readonly [number, number][];
}

const COLOURS = ['#3b82f6', '#ef4444', '#22c55e', '#f59e0b', '#a855f7', '#06b6d4', '#ec4899', '#84cc16'];

function legend(format: string, metric: Record<string, string>): string {
  return format.replace(/\{\{\s*(\w+)\s*\}\}/g, (_, name: string) => metric[name] ?? '').trim() || '(value)';
}

async function panelSeries(api: string, panel: Panel, start: number, end: number, step: number): Promise<Series[]> {
  const series: Series[] = [];
  for (const target of panel.targets) {
    const expr = target.expr.replaceAll('$__rate_interval', '20s');
    const url = `${api}/api/v1/query_range?query=${encodeURIComponent(expr)}&start=${start}&end=${end}&step=${step}`;
    const body = (await (await fetch(url)).json()) as { data?: { result: { metric: Record<string, string>; values: [number, string][] }[] } };
    for (const result of body.data?.result ?? []) {
      series.push({ label: legend(target.legendFormat, result.metric), points: result.values.map(([t, v]) => [t, Number(v)] as [number, number]).filter(([, v]) => Number.isFinite(v)) });
    }
  }
  return series;
}

function escapeXml(text: string): string {
  return text.replace(/[<>&"]/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;' })[c]!);
}

function chart(title: string, series: readonly Series[], start: number, end: number): string {
  const width = 560;
  const height = 200;
  const values = series.flatMap((s) => s.points.map(([, v]) => v));
  const max = Math.max(1e-9, ...values);
  const min = Math.min(0, ...values);
  const x = (t: number) => 40 + ((t - start) / Math.max(1, end - start)) * (width - 50);
  const y = (v: number) => 10 + (1 - (v - min) / (max - min || 1)) * (height - 30);
  const lines = series
    .map((s, i) => `<polyline fill="none" stroke="${COLOURS[i % COLOURS.length]}" stroke-width="1.5" points="${s.points.map(([t, v]) => `${x(t).toFixed(1)},${y(v).toFixed(1)}`).join(' ')}"/>`)
    .join('');
  const axis = `<text x="2" y="16" font-size="10">${max.toPrecision(3)}</text><text x="2" y="${height - 20}" font-size="10">${min.toPrecision(3)}</text>`;
  const keys = series.map((s, i) => `<span style="color:${COLOURS[i % COLOURS.length]}">■ ${escapeXml(s.label)}</span>`).join(' ');
  return `<div class="panel"><h3>${escapeXml(title)}</h3><svg width="${width}" height="${height}"><rect x="40" y="10" width="${width - 50}" height="${height - 30}" fill="#f8fafc" stroke="#cbd5e1"/>${axis}${lines}</svg><div class="keys">${keys || '<i>no series</i>'}</div></div>`;
}

/** Writes `file` (PNG): every panel of `dashboard` over [start, end] (Unix seconds). */
export async function renderDashboard(api: string, dashboard: { title: string; panels: readonly Panel[] }, start: number, end: number, file: string, chromiumPath: string): Promise<void> {
  const step = Math.max(1, Math.round((end - start) / 200));
  const charts: string[] = [];
  for (const panel of dashboard.panels) charts.push(chart(panel.title, await panelSeries(api, panel, start, end, step), start, end));
  const html = `<!doctype html><html><head><style>body{font:12px sans-serif;margin:12px;background:#fff}.grid{display:grid;grid-template-columns:repeat(2,580px);gap:10px}.panel{border:1px solid #e2e8f0;padding:6px}h3{margin:0 0 4px;font-size:13px}.keys{font-size:10px;max-height:42px;overflow:hidden}</style></head><body><h2>${escapeXml(dashboard.title)}: panels drawn from a real Prometheus (test/observability/prometheus-alerts.test.ts)</h2><div class="grid">${charts.join('')}</div></body></html>`;
  const browser = await chromium.launch({ executablePath: chromiumPath, headless: true });
  try {
    const page = await browser.newPage({ viewport: { width: 1220, height: 800 } });
    await page.setContent(html);
    await page.screenshot({ path: file, fullPage: true });
  } finally {
    await browser.close();
  }
}
