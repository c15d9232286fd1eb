import { expect } from 'chai';
import { readFile, readdir } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { allowed, importGraph, importsOf, partOf, violations } from './support/layering.js';

const src = new URL('../src', import.meta.url).pathname;

describe('the layering of src/ (DESIGN.md\'s layout table)', () => {
  it('holds: no part imports one it may not', async () => {
    expect(violations(await importGraph(src))).to.deep.equal([]);
  });

  it('puts every file of src/ in a part of the table', async () => {
    const files = (await readdir(src, { withFileTypes: true, recursive: true }))
      .filter((e) => e.isFile() && e.name.endsWith('.ts'))
      .map((e) => relative(src, join(e.parentPath, e.name)));
    expect(files.filter((f) => !(partOf(f) in allowed))).to.deep.equal([]);
    expect(new Set(files.map(partOf))).to.include.members(['core', 'sources', 'operators', 'store', 'informers', 'sinks/client', 'sinks/objects', 'sinks/events', 'sinks/metrics', 'sinks/leader', 'controller', 'observe', 'compact', 'apiserver', 'apiserver/auth', 'testing']);
  });

  it('catches what it exists for: a library part importing testing, apiserver or controller; the store reaching the client; I/O in an operator', () => {
    const found = violations([
      ...importsOf('sinks/client/kubeClient.ts', "import { memoryClient } from '../../testing/memory/memoryClient.js';"),
      ...importsOf('sources/listWatch.ts', "import { Cluster } from '../apiserver/cluster.js';"),
      ...importsOf('informers/informerFactory.ts', "import { controller } from '../controller/controller.js';"),
      ...importsOf('store/store.ts', "import { kubeClient } from '../sinks/client/kubeClient.js';"),
      ...importsOf('operators/deltas.ts', "import { readFile } from 'node:fs/promises';"),
      ...importsOf('operators/owners.ts', "import { Store } from '../store/store.js';"),
      ...importsOf('sinks/metrics/sourceMetrics.ts', "export type { ListWatchMonitor } from '../../sources/listWatch.js';"),
      ...importsOf('apiserver/cluster.ts', "const m = await import('../sinks/client/errors.js');"),
      ...importsOf('apiserver/auth/access.ts', "import { jsonResponse } from '../http/httpIo.js';"),
    ]);
    expect(found).to.deep.equal([
      'sinks/client/kubeClient.ts imports testing/memory/memoryClient.ts: sinks/client may not import testing',
      'sources/listWatch.ts imports apiserver/cluster.ts: sources may not import apiserver',
      'informers/informerFactory.ts imports controller/controller.ts: informers may not import controller',
      'store/store.ts imports sinks/client/kubeClient.ts: store may not import sinks/client',
      'operators/deltas.ts imports node:fs/promises: operators does no I/O and uses rxjs only',
      'operators/owners.ts imports store/store.ts: operators may not import store (types only)',
      'sinks/metrics/sourceMetrics.ts imports sources/listWatch.ts: sinks/metrics may not import sources',
      'apiserver/cluster.ts imports sinks/client/errors.ts: apiserver may not import sinks/client',
      'apiserver/auth/access.ts imports apiserver/http/httpIo.ts: apiserver/auth may import types only from apiserver/http/',
    ]);
    expect(violations(importsOf('apiserver/auth/requestAttributes.ts', "import type { Route } from '../http/router.js';"))).to.deep.equal([]);
    // Type-only imports of the store are what operators may have.
    expect(violations(importsOf('operators/owners.ts', "import type { Lister } from '../store/store.js';"))).to.deep.equal([]);
  });

  it('keeps what observes a controller out of the read and write path: no part of it imports observe/', async () => {
    const path = ['sources', 'compact', 'operators', 'store', 'informers', 'sinks/client', 'sinks/objects', 'sinks/events', 'sinks/metrics', 'sinks/leader', 'sinks/webhooks'];
    expect(path.filter((part) => allowed[part]?.some((rule) => rule.replace(/^type:/, '') === 'observe' || rule === '*'))).to.deep.equal([]);
    const edges = (await importGraph(src)).filter((e) => path.includes(partOf(e.from)) && partOf(e.to) === 'observe');
    expect(edges.map((e) => `${e.from} -> ${e.to}`)).to.deep.equal([]);
    // Only the wiring, the commands (deploy: exportTracesFromEnv), the entries and testing bring it in.
    expect(Object.keys(allowed).filter((part) => part !== 'observe' && allowed[part]?.some((rule) => rule === 'observe' || rule === '*'))).to.deep.equal(['controller', 'deploy', 'testing', 'entry index.ts', 'entry testing/index.ts', 'entry cli.ts']);
    expect(violations([
      ...importsOf('sinks/client/kubeClient.ts', "import type { TimelineEntry } from '../../observe/timeline.js';"),
      ...importsOf('operators/reconcileByKey.ts', "import { TimelineHub } from '../observe/timelineHub.js';"),
      ...importsOf('sinks/metrics/healthServer.ts', "import { liveView } from '../../observe/liveView/liveView.js';"),
    ])).to.deep.equal([
      'sinks/client/kubeClient.ts imports observe/timeline.ts: sinks/client may not import observe',
      'operators/reconcileByKey.ts imports observe/timelineHub.ts: operators may not import observe',
      'sinks/metrics/healthServer.ts imports observe/liveView/liveView.ts: sinks/metrics may not import observe',
    ]);
  });

  it('keeps the compact cache in one place that does no I/O: it imports only core, and no package', () => {
    expect(violations([
      ...importsOf('compact/compactCodec.ts', "import { dropManagedFields } from '../sources/transforms.js';"),
      ...importsOf('compact/bodySlabs.ts', "import { readFile } from 'node:fs/promises';"),
      ...importsOf('compact/compactObject.ts', "import type { Lister } from '../store/store.js';"),
    ])).to.deep.equal([
      'compact/compactCodec.ts imports sources/transforms.ts: compact may not import sources',
      'compact/bodySlabs.ts imports node:fs/promises: compact does no I/O and uses no package',
      'compact/compactObject.ts imports store/store.ts: compact may not import store',
    ]);
    expect(violations(importsOf('store/store.ts', "import { compactRecordOf } from '../compact/compactObject.js';"))).to.deep.equal([]);
  });

  it('keeps the OpenTelemetry SDK out of the library: only observe/tracing/exportFromEnv.ts loads it, lazily, and nothing in the read or write path imports observe', async () => {
    const edges = await importGraph(src);
    const sdk = edges.filter((e) => e.to.startsWith('@opentelemetry/') && e.to !== '@opentelemetry/api');
    expect(sdk.map((e) => `${e.from} ${e.to}`)).to.deep.equal(['observe/tracing/exportFromEnv.ts @opentelemetry/sdk-node']);
    const code = await readFile(join(src, 'observe/tracing/exportFromEnv.ts'), 'utf8');
    expect(code).to.not.match(/^import .*@opentelemetry\/sdk/m);
    const readOrWrite = ['sources', 'operators', 'store', 'informers', 'sinks/client', 'sinks/objects', 'sinks/events', 'sinks/leader'];
    expect(edges.filter((e) => readOrWrite.includes(partOf(e.from)) && e.to.startsWith('observe/')).map((e) => e.from)).to.deep.equal([]);
    expect(violations(importsOf('sinks/client/kubeClient.ts', "import { RunTracer } from '../../observe/tracing/runTracer.js';"))).to.deep.equal([
      'sinks/client/kubeClient.ts imports observe/tracing/runTracer.ts: sinks/client may not import observe',
    ]);
  });

  it('keeps sources to reading: no request in src/sources sends anything but GET', async () => {
    const entries = await readdir(join(src, 'sources'), { withFileTypes: true });
    const writers: string[] = [];
    for (const e of entries) {
      if (!e.isFile()) continue;
      const code = (await readFile(join(src, 'sources', e.name), 'utf8')).replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '');
      if (/method:\s*'(POST|PUT|PATCH|DELETE)'/.test(code)) writers.push(e.name);
    }
    expect(writers).to.deep.equal([]);
  });
});
