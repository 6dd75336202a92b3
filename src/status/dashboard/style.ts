/** The dashboard's stylesheet (inlined in the page; its hash is in the page's CSP). */
export const DASHBOARD_STYLE = `
:root { color-scheme: light dark; --fg: #1d232a; --muted: #66717d; --bg: #f7f8fa; --card: #fff;
  --line: #dde1e6; --ok: #1a7f37; --bad: #cf222e; --run: #9a6700; --accent: #0969da; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6edf3; --muted: #8b949e; --bg: #0d1117;
  --card: #161b22; --line: #30363d; --ok: #3fb950; --bad: #f85149; --run: #d29922;
  --accent: #58a6ff; } }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif;
  color: var(--fg); background: var(--bg); }
header { display: flex; flex-wrap: wrap; gap: 4px 18px; align-items: baseline;
  padding: 12px 20px; border-bottom: 1px solid var(--line); background: var(--card); }
header h1 { font-size: 17px; margin: 0; }
header .meta { color: var(--muted); font-size: 13px; }
#connection.live { color: var(--ok); }
#connection.down { color: var(--bad); }
#health { color: var(--bad); font-weight: 600; }
tr.health-cooling-down td { background: color-mix(in srgb, var(--bad) 10%, transparent); }
tr.health-cooling-down td.health { color: var(--bad); font-weight: 600; }
tr.health-failing td.health { color: var(--run); }
main { padding: 16px 20px; display: grid; gap: 16px; max-width: 1280px; }
section { background: var(--card); border: 1px solid var(--line); border-radius: 8px;
  padding: 12px 14px; overflow-x: auto; }
section h2 { font-size: 14px; margin: 0 0 8px; text-transform: uppercase; letter-spacing: .04em;
  color: var(--muted); }
table { border-collapse: collapse; width: 100%; font-variant-numeric: tabular-nums; }
th, td { text-align: left; padding: 4px 8px; border-bottom: 1px solid var(--line);
  white-space: nowrap; }
th { font-weight: 600; color: var(--muted); font-size: 12px; }
td.num, th.num { text-align: right; }
td.wrap { white-space: normal; max-width: 420px; overflow-wrap: anywhere; }
.empty { color: var(--muted); font-style: italic; }
.turn { border: 1px solid var(--line); border-radius: 6px; padding: 8px 10px; margin: 0 0 10px; }
.turn .head { display: flex; flex-wrap: wrap; gap: 4px 14px; margin-bottom: 6px; }
.turn .head b { font-family: ui-monospace, monospace; }
.muted { color: var(--muted); }
.state-running { color: var(--run); }
.state-done { color: var(--ok); }
.state-failed, .state-timed-out { color: var(--bad); }
.state-cancelled { color: var(--muted); }
.bar { height: 6px; min-width: 2px; border-radius: 3px; background: var(--run); }
.bar.done { background: var(--ok); }
.bar.failed, .bar.timed-out { background: var(--bad); }
.bar.cancelled { background: var(--muted); }
.barcell { width: 180px; }
svg { display: block; width: 100%; max-width: 900px; height: 180px; }
svg .spend { fill: var(--accent); }
svg .total { fill: none; stroke: var(--ok); stroke-width: 2; }
svg .axis { stroke: var(--line); }
svg .agreed { fill: var(--ok); }
svg text { fill: var(--muted); font-size: 11px; }
#login { max-width: 420px; margin: 60px auto; background: var(--card); padding: 20px;
  border: 1px solid var(--line); border-radius: 8px; display: grid; gap: 10px; }
#login input { font: inherit; padding: 6px 8px; border: 1px solid var(--line); border-radius: 4px;
  background: var(--bg); color: var(--fg); }
#login button { font: inherit; padding: 6px 10px; cursor: pointer; }
#login .error { color: var(--bad); min-height: 1.4em; }
[hidden] { display: none !important; }
`;
