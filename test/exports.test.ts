import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import * as rxkube from 'rxkube';
import * as testing from 'rxkube/testing';
import * as apiserver from 'rxkube/apiserver';
import { apiReport } from '../scripts/apiReport.js';

const run = promisify(execFile);
const root = new URL('..', import.meta.url).pathname;

// The names DESIGN.md and the issues give to the parts: code outside the project imports them.
const mainExports = [
  'objectKey', 'splitKey', 'isDelta', 'InvalidObjectError', 'silentLogger', 'createDefaultLogger',
  'listWatch', 'fromWatchEvents', 'shareSource', 'InformerFactory', 'dropManagedFields', 'ListWatchError',
  'deltas', 'resync', 'reconcileByKey', 'defaultControllerRateLimiter', 'exponentialFailureRateLimiter',
  'fastSlowRateLimiter', 'bucketRateLimiter', 'maxOfRateLimiter', 'generationChanged', 'resourceVersionChanged',
  'labelsChanged', 'annotationsChanged', 'and', 'or', 'not', 'filterDeltas', 'mapToOwners', 'mapToKeys',
  'indexer', 'Store', 'NAMESPACE_INDEX',
  'kubeClient', 'isNotFound', 'isConflict', 'isAlreadyExists', 'isGone', 'isTooManyRequests', 'finalizer',
  'setControllerReference', 'setOwnerReference', 'isControlledBy', 'setCondition', 'removeCondition', 'isConditionTrue', 'isConditionFalse',
  'installCrd', 'uninstallCrd', 'eventRecorder', 'controllerMetrics', 'sourceMetrics', 'leaderMetrics',
  'startHealthServer', 'leaderElection',
  'controller', 'runController', 'perObjectTimer', 'TriggerError',
];
const testingExports = ['startApiServer', 'runReconcile', 'memoryClient', 'memoryRecorder', 'inMemoryLeaseClient', 'pausable'];

describe('the public entry points', function () {
  this.timeout(180_000);

  it('export every part under the name the design gives it', () => {
    expect(mainExports.filter((name) => !(name in rxkube))).to.deep.equal([]);
    expect(testingExports.filter((name) => !(name in testing))).to.deep.equal([]);
    expect('startApiServer' in apiserver).to.equal(true);
  });

  it('match the API reports in api/, name by name and shape by shape, and document every symbol they reach', async () => {
    const { changed, errors } = await apiReport({ check: true });
    // One line per symbol: which one, in which source file (scripts/apiReport.ts words it).
    expect(errors.filter((e) => e.includes(' has no doc comment ')), 'exported symbols, members and options without a doc comment').to.deep.equal([]);
    expect(errors, 'api-extractor errors').to.deep.equal([]);
    expect(changed, 'reports that differ from the exported API: review the change, then run npm run api:report').to.deep.equal([]);
  });

  // The cap keeps the root a chosen surface: 90 values until the helpers a user's controller needs (conditions, owners, CRDs, pipelines, manifests; issue 36).
  it('export at most 100 values from the root entry, and name every type the API reaches', async () => {
    const report = await readFile(join(root, 'api/rxkube.api.md'), 'utf8');
    const exported = (kinds: string) => new Set([...report.matchAll(new RegExp(`^export (?:declare )?(?:abstract )?(?:${kinds}) ([A-Za-z_$][\\w$]*)`, 'gm'))].map((m) => m[1]));
    // Values are the surface a release must keep working; the types of their options and results are exported too, so that
    // callers can name them: the reference site's build (test/docsSite.test.ts) fails on a type the API reaches that no
    // entry (rxkube, rxkube/testing, rxkube/apiserver, rxkube/webhooks, rxkube/kinds) exports.
    const values = exported('function|class|const|let|enum|namespace');
    expect(values.size, [...values].join(', ')).to.be.at.most(100);
    // The values among them are what a plain import sees; the rest are types.
    const names = exported('function|class|interface|type|const|let|enum|namespace');
    expect(Object.keys(rxkube).every((name) => names.has(name))).to.equal(true);
  });

  it('build to JavaScript that plain Node imports, without tsx', async () => {
    // Inside the project, so that the built files resolve its node_modules.
    const out = await mkdtemp(join(root, '.build-test-'));
    try {
      await run(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(root, 'tsconfig.build.json'), '--outDir', out], { cwd: root }).catch(
        (err: { stdout?: string }) => {
          throw new Error(`the build failed:\n${err.stdout ?? String(err)}`);
        },
      );
      const script = `const m = await import(${JSON.stringify(join(out, 'index.js'))}); const t = await import(${JSON.stringify(join(out, 'testing/index.js'))});
        const s = await t.startApiServer(); await s.close(); console.log(typeof m.controller, typeof m.listWatch);`;
      const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: root });
      expect(stdout.trim()).to.equal('function function');
    } finally {
      await rm(out, { recursive: true, force: true });
    }
  });
});
