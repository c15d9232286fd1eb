/**
 * The live view's page, served at `/debug/rxkube/`. A TS string module
 * rather than an .html file, so that it is found alike from `src/` (tsx)
 * and from `dist/`, and comes with `npm pack` without a copy step.
 */
export const liveViewPage = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>rxkube live view</title>
<link rel="stylesheet" href="style.css">
<script src="app.js" defer></script>
</head>
<body>
<header>
  <h1>rxkube <span id="controller">controller</span></h1>
  <span id="leading" class="badge"></span>
  <span id="status" class="badge status">connecting…</span>
  <span id="ended" class="badge ended" hidden></span>
  <span id="clock" class="clock"></span>
</header>
<main>
  <section id="queue-panel" class="panel">
    <h2>Queue</h2>
    <dl class="figures">
      <div><dt>waiting</dt><dd id="queue-depth">–</dd></div>
      <div><dt>running</dt><dd id="queue-running">–</dd></div>
      <div><dt>delayed</dt><dd id="queue-delayed">–</dd></div>
      <div><dt>longest wait</dt><dd id="queue-longest">–</dd></div>
    </dl>
  </section>
  <section id="informers-panel" class="panel">
    <h2>Informers</h2>
    <table id="informers">
      <thead><tr><th>resource</th><th>synced</th><th>objects</th><th>resourceVersion</th><th>relists</th><th>failures</th><th>last error</th></tr></thead>
      <tbody></tbody>
    </table>
  </section>
  <section id="keys-panel" class="panel">
    <h2>Keys</h2>
    <div class="controls">
      <input id="filter" type="search" placeholder="filter keys (substring)" autocomplete="off" spellcheck="false">
      <select id="state-filter" title="show only keys in this state">
        <option value="">any state</option>
        <option value="waiting">waiting</option>
        <option value="running">running</option>
        <option value="delayed">delayed</option>
        <option value="idle">done</option>
        <option value="failing">failing</option>
      </select>
      <select id="order" title="order of the list">
        <option value="key">by key</option>
        <option value="recent">most recent first</option>
        <option value="attempt">most attempts first</option>
      </select>
      <span id="key-count"></span>
    </div>
    <table id="keys">
      <thead><tr><th>key</th><th>state</th><th>attempt</th><th>last outcome</th><th>took</th><th>recent runs</th><th>error</th><th>next run</th></tr></thead>
      <tbody></tbody>
    </table>
  </section>
  <aside id="detail" class="panel" hidden>
    <h2><span id="detail-key"></span> <button id="detail-close" type="button" title="close">×</button></h2>
    <p id="detail-error" class="error" hidden></p>
    <p id="detail-summary"></p>
    <h3>Runs</h3>
    <table id="detail-runs">
      <thead><tr><th>started</th><th>cause</th><th>attempt</th><th>took</th><th>outcome</th><th>error</th><th>next run</th><th>writes</th><th>trace</th></tr></thead>
      <tbody></tbody>
    </table>
    <h3>History</h3>
    <ol id="detail-history"></ol>
    <h3>Cached object</h3>
    <pre id="detail-object"></pre>
  </aside>
</main>
</body>
</html>
`;
