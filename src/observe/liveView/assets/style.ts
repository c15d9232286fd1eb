/** The live view's style sheet (`style.css`); a string module for the reason `page.ts` gives. */
export const liveViewStyle = `:root {
  --bg: #f7f7f5; --panel: #fff; --ink: #1d1f21; --muted: #6a6f75; --line: #e2e2de;
  --waiting: #b7791f; --running: #2b6cb0; --delayed: #c05621; --done: #2f855a; --error: #c53030;
  font: 13px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--ink); background: var(--bg);
}
body { margin: 0; }
header { display: flex; align-items: center; gap: 10px; padding: 8px 16px; background: #20232a; color: #eee; }
header h1 { font-size: 16px; margin: 0 8px 0 0; font-weight: 600; }
header h1 span { color: #8ec5ff; }
.badge { border-radius: 10px; padding: 1px 8px; background: #3a3f4b; font-size: 12px; }
.status.live { background: #276749; }
.status.down { background: #9b2c2c; }
.ended { background: #744210; }
.clock { margin-left: auto; font-variant-numeric: tabular-nums; color: #aaa; }
main { display: grid; grid-template-columns: minmax(260px, 1fr) 3fr; gap: 12px; padding: 12px 16px; align-items: start; }
.panel { background: var(--panel); border: 1px solid var(--line); border-radius: 6px; padding: 8px 12px; min-width: 0; }
.panel h2 { font-size: 13px; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); margin: 2px 0 8px; }
.panel h3 { font-size: 12px; color: var(--muted); margin: 12px 0 4px; }
#queue-panel { grid-column: 1; }
#informers-panel { grid-column: 2; }
#keys-panel { grid-column: 1 / span 2; }
#detail { grid-column: 1 / span 2; }
/* With a key's detail open: the list and the detail side by side, the figures above them. */
main.with-detail { grid-template-columns: 3fr 2fr; }
main.with-detail #keys-panel { grid-column: 1; grid-row: 2; }
main.with-detail #detail { grid-column: 2; grid-row: 2; position: sticky; top: 8px; max-height: calc(100vh - 24px); overflow: auto; }
.figures { display: grid; grid-template-columns: repeat(4, 1fr); gap: 8px; margin: 0; }
.figures div { text-align: center; }
.figures dt { color: var(--muted); font-size: 11px; }
.figures dd { margin: 0; font-size: 22px; font-variant-numeric: tabular-nums; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 3px 6px; border-bottom: 1px solid var(--line); white-space: nowrap; overflow: hidden; text-overflow: ellipsis; max-width: 28em; }
th { font-weight: 600; color: var(--muted); font-size: 11px; }
td { font-variant-numeric: tabular-nums; }
/* Fixed layout: a changed cell never makes the browser measure the whole table again (10 000 keys, 4 batches a second). */
#keys { table-layout: fixed; }
#keys-panel { contain: layout paint; }
#keys th:nth-child(1) { width: 24%; } #keys th:nth-child(2) { width: 7%; } #keys th:nth-child(3) { width: 5%; }
#keys th:nth-child(4) { width: 9%; } #keys th:nth-child(5) { width: 8%; } #keys th:nth-child(6) { width: 110px; }
#keys th:nth-child(7) { width: 22%; } #keys th:nth-child(8) { width: 12%; }
#keys td { max-width: none; }
#keys tbody tr { cursor: pointer; }
#keys tbody tr:hover { background: #f0f4fa; }
#keys tbody tr.selected { background: #e3edfb; }
.controls { display: flex; gap: 8px; align-items: center; margin-bottom: 6px; }
#filter { flex: 0 1 22em; padding: 4px 6px; border: 1px solid var(--line); border-radius: 4px; }
#key-count { color: var(--muted); }
.state-waiting { color: var(--waiting); font-weight: 600; }
.state-running { color: var(--running); font-weight: 600; }
.state-delayed { color: var(--delayed); font-weight: 600; }
.state-done { color: var(--done); }
.state-dropped, .error, .result-error, .result-dropped { color: var(--error); }
.runs span { display: inline-block; width: 9px; height: 9px; margin-right: 2px; border-radius: 2px; background: var(--done); }
.runs .r-e, .runs .r-d { background: var(--error); }
.runs .r-r, .runs .r-a { background: var(--delayed); }
.runs .r-run { background: var(--running); }
#detail-runs td:nth-child(2), #detail-runs td:nth-child(6) { white-space: normal; max-width: 16em; }
#informers-panel { overflow-x: auto; }
#detail pre { background: #fafaf8; border: 1px solid var(--line); padding: 8px; overflow: auto; max-height: 24em; font-size: 12px; }
#detail ol { padding-left: 0; list-style: none; margin: 0; font-family: ui-monospace, Menlo, monospace; font-size: 12px; }
#detail ol li { padding: 1px 0; white-space: pre-wrap; word-break: break-word; }
#detail-close { float: right; border: none; background: none; font-size: 16px; cursor: pointer; color: var(--muted); }
.muted { color: var(--muted); }
`;
