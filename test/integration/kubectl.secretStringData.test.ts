import { CoreV1Api, PatchStrategy, setHeaderOptions, type V1Secret } from '@kubernetes/client-node';
import { expect } from 'chai';
import { stringify } from 'yaml';
import { json } from './apiserver.helpers.js';
import { describeKubectl, kubectlAgainstServer } from './kubectl.helpers.js';

/**
 * A Secret's `stringData` as kube-apiserver 1.32 takes it (the conversion of a v1 Secret,
 * pkg/apis/core/v1/conversion.go): each value is base64'd into `data`, over a `data` key of the
 * same name, on every write, and `stringData` itself is never stored or returned.
 */

const b64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64');

interface Secret {
  data?: Record<string, string>;
  stringData?: unknown;
  metadata: { resourceVersion: string };
}

describeKubectl('a Secret\'s stringData', function () {
  this.timeout(60_000);
  const suite = kubectlAgainstServer('rxkube-kubectl-secrets-');

  const get = async (name: string): Promise<Secret> => JSON.parse(await suite.k.ok(['get', 'secret', name, '-o', 'json'])) as Secret;

  function manifest(name: string): string {
    return stringify({ apiVersion: 'v1', kind: 'Secret', metadata: { name }, data: { a: b64('from data'), b: b64('old') }, stringData: { b: 'from stringData', c: 'ç' } });
  }

  it('kubectl create secret and kubectl create -f: stringData is merged into data, overriding its keys, and not stored', async () => {
    expect(await suite.k.ok(['create', 'secret', 'generic', 'literal', '--from-literal=user=admin'])).to.equal('secret/literal created\n');
    expect((await get('literal')).data).to.deep.equal({ user: b64('admin') });

    const created = JSON.parse(await suite.k.ok(['create', '-f', '-', '-o', 'json'], manifest('mixed'))) as Secret;
    const expected = { a: b64('from data'), b: b64('from stringData'), c: b64('ç') };
    expect(created.data).to.deep.equal(expected);
    expect(created).to.not.have.property('stringData');
    const read = await get('mixed');
    expect(read.data).to.deep.equal(expected);
    expect(read).to.not.have.property('stringData');
  });

  it('kubectl apply, client-side and server-side, merges it the same way; a server-side re-apply changes nothing', async () => {
    await suite.k.ok(['apply', '-f', '-'], manifest('applied'));
    expect((await get('applied')).data).to.deep.equal({ a: b64('from data'), b: b64('from stringData'), c: b64('ç') });
    await suite.k.ok(['apply', '--server-side', '-f', '-'], manifest('ssa'));
    const first = await get('ssa');
    expect(first.data).to.deep.equal({ a: b64('from data'), b: b64('from stringData'), c: b64('ç') });
    expect(first).to.not.have.property('stringData');
    await suite.k.ok(['apply', '--server-side', '-f', '-'], manifest('ssa'));
    expect((await get('ssa')).metadata.resourceVersion).to.equal(first.metadata.resourceVersion);
  });

  it('an update and a merge patch through client-node merge it too', async () => {
    const core = suite.server.kubeConfig().makeApiClient(CoreV1Api);
    const body: V1Secret = { metadata: { name: 'updated' }, data: { a: b64('1') } };
    await core.createNamespacedSecret({ namespace: 'default', body });
    const live = await core.readNamespacedSecret({ namespace: 'default', name: 'updated' });
    const replaced = await core.replaceNamespacedSecret({ namespace: 'default', name: 'updated', body: { ...live, stringData: { a: '2' } } });
    expect(replaced.data).to.deep.equal({ a: b64('2') });
    const patched = await core.patchNamespacedSecret(
      { namespace: 'default', name: 'updated', body: { stringData: { b: '3' } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    expect(patched.data).to.deep.equal({ a: b64('2'), b: b64('3') });
    expect(patched).to.not.have.property('stringData');
    // `__proto__` is a key like any other (client-node's serializer would drop it: raw JSON here).
    const proto = await json(suite.server, 'POST', '/api/v1/namespaces/default/secrets', JSON.parse('{"metadata":{"name":"proto"},"stringData":{"__proto__":"p"}}'));
    expect(proto.text).to.contain(`"data":{"__proto__":"${b64('p')}"}`);
  });
});
