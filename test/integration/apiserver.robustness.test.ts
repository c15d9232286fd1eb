import { Agent, request } from 'node:http';
import { connect } from 'node:net';
import { expect } from 'chai';
import type { ApiServer } from 'rxkube/testing';
import { json, raw, start, widgetCrd } from './apiserver.helpers.js';

/**
 * Requests that once crashed the embedded API server or got a 5xx from it (found by
 * test/fuzz/apiserver.fuzz.test.ts), each answered now with a Status error, the server healthy after.
 */

/** Sends `head` over a raw socket (what node:http's client refuses to send) and returns the whole answer. */
function rawRequest(server: ApiServer, head: string): Promise<string> {
  const { hostname, port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let text = '';
    socket.on('data', (c: Buffer) => (text += c.toString('utf8')));
    socket.on('end', () => resolve(text));
    socket.on('error', reject);
    socket.write(head);
  });
}

function statusBody(answer: string): Record<string, unknown> {
  return JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as Record<string, unknown>;
}

describe('embedded API server: robustness against malformed requests', () => {
  let server: ApiServer;
  beforeEach(async () => (server = await start()));
  afterEach(() => server.close());

  async function expectHealthy(): Promise<void> {
    expect((await raw(server, 'GET', '/api/v1/namespaces/default/configmaps')).status).to.equal(200);
  }

  it('answers an absolute-form request target that is no URL with 400 BadRequest, and does not crash', async () => {
    const answer = await rawRequest(server, 'GET http://[ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
    expect(answer).to.match(/^HTTP\/1\.1 400 /);
    expect(statusBody(answer)).to.deep.include({ kind: 'Status', code: 400, reason: 'BadRequest', message: 'the request target "http://[" is not a valid URL' });
    await expectHealthy();
  });

  it('answers a method Node cannot parse with 405 MethodNotAllowed as a Status', async () => {
    const answer = await rawRequest(server, 'FOO /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(answer).to.match(/^HTTP\/1\.1 405 /);
    expect(statusBody(answer)).to.deep.include({ kind: 'Status', code: 405, reason: 'MethodNotAllowed' });
    await expectHealthy();
  });

  it('answers a request head too large to parse (past 1 MiB, as kube-apiserver) with 431 as a Status', async () => {
    // Just past the limit: the server has read all of it when it answers, so closing sends no reset that could lose the answer.
    const answer = await rawRequest(server, `GET /api/v1/namespaces/default/configmaps?labelSelector=${'x'.repeat(1 << 20)} HTTP/1.1\r\nHost: x\r\n\r\n`);
    expect(answer).to.match(/^HTTP\/1\.1 431 /);
    expect(statusBody(answer)).to.deep.include({ kind: 'Status', code: 431, reason: 'RequestHeaderFieldsTooLarge' });
    await expectHealthy();
  });

  it('answers HEAD on a watch with the head alone, leaving a kept-alive connection free for the next request', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const head = await viaAgent(agent, 'HEAD', '/api/v1/namespaces/default/configmaps?watch=true');
      expect(head).to.equal(200);
      expect(await viaAgent(agent, 'GET', '/api/v1/namespaces/default/configmaps')).to.equal(200);
      expect(server.openWatches()).to.equal(0);
    } finally {
      agent.destroy();
    }
  });

  it('holds a watch whose timeoutSeconds is beyond what a Node timer holds, without a timer overflow', async () => {
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on('warning', onWarning);
    const agent = new Agent({ keepAlive: false });
    try {
      const req = request(`${server.url}/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=9999999999`, { agent });
      const opened = new Promise<number>((resolve) => req.on('response', (res) => resolve(res.statusCode ?? 0)));
      req.on('error', () => {});
      req.end();
      expect(await opened).to.equal(200);
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.map((w) => w.name)).to.deep.equal([]);
      expect(server.openWatches()).to.equal(1);
      req.destroy();
    } finally {
      process.off('warning', onWarning);
      agent.destroy();
    }
  });

  /** One request through `agent`; rejects when no complete answer comes in 5 s (a connection held by an earlier answer). */
  function viaAgent(agent: Agent, method: string, path: string): Promise<number> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${method} ${path}: no answer in 5 s`)), 5000);
      const req = request(`${server.url}${path}`, { method, agent }, (res) => {
        res.resume();
        res.on('end', () => {
          clearTimeout(timer);
          resolve(res.statusCode ?? 0);
        });
      });
      req.on('error', reject);
      req.end();
    });
  }

  it('refuses writes through the legacy /watch/ prefix with 405, as kube does, and leaves the object alone', async () => {
    expect((await json(server, 'POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'a' } })).status).to.equal(201);
    const deleted = await raw(server, 'DELETE', '/api/v1/watch/namespaces/default/configmaps/a');
    expect(deleted.status).to.equal(405);
    expect(deleted.json()).to.deep.include({ kind: 'Status', reason: 'MethodNotAllowed' });
    const created = await json(server, 'POST', '/api/v1/watch/namespaces/default/configmaps', { metadata: { name: 'b' } });
    expect(created.status).to.equal(405);
    expect((await raw(server, 'GET', '/api/v1/namespaces/default/configmaps/a')).status).to.equal(200);
    expect((await raw(server, 'GET', '/api/v1/namespaces/default/configmaps/b')).status).to.equal(404);
  });

  it('refuses to delete the default, kube-system and kube-public namespaces with 403, as kube does', async () => {
    for (const name of ['default', 'kube-system', 'kube-public']) {
      const res = await raw(server, 'DELETE', `/api/v1/namespaces/${name}`);
      expect(res.status, name).to.equal(403);
      expect(res.json()).to.deep.include({ kind: 'Status', reason: 'Forbidden', message: `namespaces "${name}" is forbidden: this namespace may not be deleted` });
      const ns = (await raw(server, 'GET', `/api/v1/namespaces/${name}`)).json() as { metadata: { deletionTimestamp?: string } };
      expect(ns.metadata.deletionTimestamp, name).to.equal(undefined);
    }
    expect((await json(server, 'POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'still-here' } })).status).to.equal(201);
  });

  it('answers metadata fields of the wrong JSON type with 400 in Go decoder words, and takes null ones as unset', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ name: false }, 'cannot unmarshal bool into Go struct field ObjectMeta.metadata.name of type string'],
      [{ name: 'a', generateName: 5 }, 'cannot unmarshal number into Go struct field ObjectMeta.metadata.generateName of type string'],
      [{ name: 'a', resourceVersion: {} }, 'cannot unmarshal object into Go struct field ObjectMeta.metadata.resourceVersion of type string'],
      [{ name: 'a', generation: 1.5 }, 'cannot unmarshal number 1.5 into Go struct field ObjectMeta.metadata.generation of type int64'],
    ];
    for (const [metadata, wording] of cases) {
      const res = await json(server, 'POST', '/api/v1/namespaces/default/configmaps', { metadata });
      expect(res.status, JSON.stringify(metadata)).to.equal(400);
      expect(res.json().message).to.equal(`ConfigMap in version "v1" cannot be handled as a ConfigMap: json: ${wording}`);
    }
    const created = await json(server, 'POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: 'nulls', uid: null, generateName: null, creationTimestamp: null } });
    expect(created.status, created.text).to.equal(201);
    await expectHealthy();
  });

  it('answers a body whose lists do not fit the kind (a container that is a number) with 400, on create and update', async () => {
    const pods = '/api/v1/namespaces/default/pods';
    const created = await json(server, 'POST', pods, { metadata: { name: 'p' }, spec: { containers: [5] } });
    expect(created.status, created.text).to.equal(400);
    expect(created.json().message).to.equal('Pod in version "v1" cannot be handled as a Pod: .spec.containers: element 0: expected an object in an associative list');
    expect((await json(server, 'POST', pods, { metadata: { name: 'p' }, spec: { containers: [{ name: 'app', image: 'nginx' }] } })).status).to.equal(201);
    const updated = await json(server, 'PUT', `${pods}/p`, { metadata: { name: 'p' }, spec: { containers: ['x'] } });
    expect(updated.status, updated.text).to.equal(400);
    const patched = await json(server, 'PATCH', `${pods}/p`, { spec: { containers: [true] } }, 'application/merge-patch+json');
    expect(patched.status, patched.text).to.equal(400);
    await expectHealthy();
  });

  it('refuses a Deployment whose selector is no label selector with 422, so its scale can always be read', async () => {
    const deployments = '/apis/apps/v1/namespaces/default/deployments';
    const template = { metadata: { labels: { app: 'a' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } };
    for (const selector of [{ matchLabels: { app: 5 } }, { matchExpressions: [{ key: 5, operator: 'In', values: ['a'] }] }, { matchExpressions: 'x' }, { matchLabels: { 'a b': 'c' } }]) {
      const res = await json(server, 'POST', deployments, { metadata: { name: 'd' }, spec: { selector, template } });
      expect(res.status, JSON.stringify(selector)).to.equal(422);
      expect(res.json()).to.deep.include({ reason: 'Invalid' });
      expect(String(res.json().message)).to.match(/^Deployment\.apps "d" is invalid: spec\.selector: Invalid value: /);
    }
    expect((await json(server, 'POST', deployments, { metadata: { name: 'd' }, spec: { selector: { matchLabels: { app: 'a' } }, template } })).status).to.equal(201);
    const patched = await json(server, 'PATCH', `${deployments}/d`, { spec: { selector: { matchLabels: { app: 7 } } } }, 'application/merge-patch+json');
    expect(patched.status).to.equal(422);
    const scale = await raw(server, 'GET', `${deployments}/d/scale`);
    expect(scale.status).to.equal(200);
    expect(scale.json()).to.deep.include({ status: { replicas: 0, selector: 'app=a' } });
  });

  describe('bodies nested deeper than the stack allows', () => {
    /** A widget whose spec nests `depth` levels below the body's top (the body itself is level 1). */
    const nested = (depth: number, name: string) => {
      let spec: unknown = 1;
      for (let i = 0; i < depth - 1; i++) spec = { a: spec };
      return { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name }, spec };
    };
    const widgets = '/apis/example.com/v1/namespaces/default/widgets';

    beforeEach(async () => {
      expect((await json(server, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', widgetCrd())).status).to.equal(201);
    });

    it('refuses a body nested more than 1000 levels deep with 400 BadRequest, on create, patch and apply', async () => {
      const tooDeep = nested(1001, 'deep');
      const created = await json(server, 'POST', widgets, tooDeep);
      expect(created.status, created.text.slice(0, 300)).to.equal(400);
      expect(created.json()).to.deep.include({ kind: 'Status', reason: 'BadRequest', message: 'the request body nests more than 1000 levels deep' });
      expect((await json(server, 'POST', widgets, nested(3, 'w'))).status).to.equal(201);
      const patched = await json(server, 'PATCH', `${widgets}/w`, { spec: tooDeep.spec }, 'application/merge-patch+json');
      expect(patched.status, patched.text.slice(0, 300)).to.equal(400);
      const applied = await json(server, 'PATCH', `${widgets}/w?fieldManager=test`, tooDeep, 'application/apply-patch+yaml');
      expect(applied.status, applied.text.slice(0, 300)).to.equal(400);
      const array = await raw(server, 'POST', widgets, { body: `${'['.repeat(20_000)}${']'.repeat(20_000)}`, headers: { 'Content-Type': 'application/json' } });
      expect(array.status, array.text.slice(0, 300)).to.equal(400);
      await expectHealthy();
    });

    it('refuses YAML nested more than 300 levels deep with 400 BadRequest before the YAML parser recurses, in flow and block style', async () => {
      // 300 levels as YAML: the root, then `spec` and 298 flow maps below it.
      const yaml = (braces: number, name: string): string => `apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: ${name}\nspec: ${'{a: '.repeat(braces)}1${'}'.repeat(braces)}\n`;
      const send = (method: string, path: string, body: string, type: string) => raw(server, method, path, { body, headers: { 'Content-Type': type } });
      const indented = Array.from({ length: 2000 }, (_, i) => `${' '.repeat(i)}a:`).join('\n');
      for (const body of [yaml(100_000, 'deep'), yaml(300, 'deep'), `spec: ${'['.repeat(1_000_000)}`, `${'- '.repeat(500_000)}x`, indented]) {
        const created = await send('POST', widgets, body, 'application/yaml');
        expect([created.status, created.json().message], created.text.slice(0, 300)).to.deep.equal([400, 'the request body nests more than 300 levels deep']);
        const applied = await send('PATCH', `${widgets}/deep?fieldManager=test`, body, 'application/apply-patch+yaml');
        expect([applied.status, applied.json().message], applied.text.slice(0, 300)).to.deep.equal([400, 'the request body nests more than 300 levels deep']);
      }
      expect((await send('POST', widgets, yaml(299, 'deepest'), 'application/yaml')).status).to.equal(201);
      expect((await send('POST', widgets, `${yaml(1, 'quoted').trimEnd()}\n  b: "[[[[{{{{"\n`.replace('spec: {a: 1}', 'spec:\n  a: \'[[[[\''), 'application/yaml')).status).to.equal(201);
      await expectHealthy();
    });

    it('stores and patches a body nested 1000 levels deep', async () => {
      const deepest = nested(1000, 'deep');
      const created = await json(server, 'POST', widgets, deepest);
      expect(created.status, created.text.slice(0, 300)).to.equal(201);
      const patched = await json(server, 'PATCH', `${widgets}/deep`, { metadata: { labels: { a: 'b' } } }, 'application/merge-patch+json');
      expect(patched.status, patched.text.slice(0, 300)).to.equal(200);
      expect((await raw(server, 'GET', `${widgets}/deep`)).json()).to.deep.include({ spec: deepest.spec });
    });
  });

  it('answers a strategic merge patch or an apply whose lists do not fit the kind with 422, not kube\'s 500', async () => {
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'i' }] } };
    expect((await json(server, 'POST', '/api/v1/namespaces/default/pods', pod)).status).to.equal(201);
    const patched = await json(server, 'PATCH', '/api/v1/namespaces/default/pods/p', { spec: { containers: [{ image: 'x' }] } }, 'application/strategic-merge-patch+json');
    expect(patched.status).to.equal(422);
    expect(patched.json()).to.include({ kind: 'Status', reason: 'Invalid' });
    expect(String(patched.json().message)).to.contain('does not contain declared merge key: name');
    const applied = await raw(server, 'PATCH', '/api/v1/namespaces/default/pods/q?fieldManager=test', {
      body: JSON.stringify({ ...pod, metadata: { name: 'q' }, spec: { containers: [{ image: 'x' }] } }),
      headers: { 'Content-Type': 'application/apply-patch+yaml' },
    });
    expect(applied.status).to.equal(422);
    await expectHealthy();
  });
});
