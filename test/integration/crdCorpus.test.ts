import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ApiException,
  createConfiguration,
  KubernetesObjectApi,
  PatchStrategy,
  ServerConfiguration,
  type KubeConfig,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { expect } from 'chai';
import { start } from './apiserver.helpers.js';
import {
  corpusRoot,
  definedKind,
  groupKind,
  itemOf,
  objectsOf,
  projects,
  yamlFiles,
  type CorpusObject,
  type CorpusServer,
  type Project,
} from './crdCorpus.data.js';
import { describeKubectl, kubectlIn } from './kubectl.helpers.js';

/**
 * The embedded API server against real CRDs of public projects (test/data/crds):
 * each project's CRDs go in through `kubectl apply --server-side` and must
 * become Established; then every invalid example is refused with the words its
 * project expects, and every valid example is applied (server-side apply with
 * `fieldValidation=Strict`, as kubectl sends it) through client-node. What the
 * server cannot do yet is a listed exception with its reason, in the
 * project's manifest.json: the test fails when an exception starts to pass
 * (so the list stays true) as well as when anything else fails.
 * RXKUBE_CORPUS_SHOW=1 also prints what the excepted objects got, in full.
 */

/** client-node's object API, asking for strict field validation as kubectl does. */
function strictObjectApi(kc: KubeConfig): KubernetesObjectApi {
  const cluster = kc.getCurrentCluster();
  if (cluster === null) throw new Error('the server\'s kubeconfig has no cluster');
  const configuration = createConfiguration({
    baseServer: new ServerConfiguration(cluster.server, {}),
    authMethods: { default: kc },
    promiseMiddleware: [
      {
        pre: (context) => {
          context.setQueryParam('fieldValidation', 'Strict');
          return Promise.resolve(context);
        },
        post: (response) => Promise.resolve(response),
      },
    ],
  });
  // Objects without a namespace go to `default`, the API's own default, as kubectl's do with this kubeconfig.
  return new KubernetesObjectApi(configuration);
}

/** What the server answered to one object: undefined when it took it, else its message. */
async function applied(api: KubernetesObjectApi, object: CorpusObject): Promise<string | undefined> {
  try {
    await api.patch(object.body as KubernetesObject, undefined, undefined, 'kubectl', undefined, PatchStrategy.ServerSideApply);
    return undefined;
  } catch (error) {
    if (error instanceof ApiException) {
      const body = error.body as unknown;
      try {
        return (JSON.parse(String(body)) as { message?: string }).message ?? String(body);
      } catch {
        return `${error.code}: ${String(body)}`;
      }
    }
    return error instanceof Error ? error.message : String(error);
  }
}

/** kubectl's word on one object of an `apply` of many: undefined when applied, else its error. */
function kubectlOutcome(stdout: string, stderr: string, object: CorpusObject): string | undefined {
  const done = new RegExp(`^${object.kind.toLowerCase()}\\.\\S*/${object.name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} serverside-applied$`, 'm');
  if (done.test(stdout)) return undefined;
  const mentions = stderr.split(/\n(?=Error from server|error:)/).filter((block) => block.includes(`"${object.name}"`));
  return mentions.length > 0 ? mentions.join('\n') : `not applied; kubectl said: ${stderr}`;
}

interface Verdict {
  item: string;
  /** Undefined when the object behaved as its project expects, else what happened. */
  failure: string | undefined;
}

/** Compares verdicts with the project's exceptions for this server: what is wrong, in words. */
function discrepancies(project: Project, server: CorpusServer, verdicts: Verdict[]): string[] {
  const showAll = process.env.RXKUBE_CORPUS_SHOW === '1';
  const exceptions = new Map(project.manifest.exceptions.filter((e) => e.server === server.name).map((e) => [e.item, e]));
  const out: string[] = [];
  for (const { item, failure } of verdicts) {
    const excepted = exceptions.has(item);
    exceptions.delete(item);
    if (failure === undefined && excepted) out.push(`${item}: passes now; remove its exception`);
    if (failure !== undefined && (!excepted || showAll)) out.push(`${item}: ${failure.length > 500 && !showAll ? `${failure.slice(0, 500)}…` : failure}`);
  }
  for (const item of exceptions.keys()) out.push(`${item}: an exception for an object the corpus does not have`);
  return out;
}

async function runServer(project: Project, server: CorpusServer): Promise<string[]> {
  const projectDir = join(corpusRoot, project.dir);
  const api = await start();
  const dir = await mkdtemp(join(tmpdir(), 'rxkube-corpus-'));
  const kubectl = kubectlIn(dir, join(dir, 'kubeconfig'));
  try {
    await api.writeKubeconfig(join(dir, 'kubeconfig'));
    const verdicts: Verdict[] = [];

    const crds = yamlFiles(project, server.crds).flatMap((file) => objectsOf(project, file));
    const install = await kubectl.run(['apply', '--server-side', ...server.crds.flatMap((folder) => ['-f', join(projectDir, folder)])]);
    const missingKinds = new Set<string>();
    const established: string[] = [];
    for (const object of crds) {
      const failure = kubectlOutcome(install.stdout, install.stderr, object);
      verdicts.push({ item: itemOf(object), failure });
      if (object.kind !== 'CustomResourceDefinition') continue;
      if (failure === undefined) established.push(`crd/${object.name}`);
      else missingKinds.add(definedKind(object));
    }
    if (established.length > 0) {
      const wait = await kubectl.run(['wait', '--for=condition=Established', '--timeout=60s', ...established]);
      if (wait.code !== 0) verdicts.push({ item: 'kubectl wait --for=condition=Established', failure: wait.stderr });
    }

    const refusals = project.manifest.invalid;
    const invalidFiles = [...yamlFiles(project, server.invalid), ...yamlFiles(project, server.valid).filter((file) => file in refusals)];
    const validFiles = yamlFiles(project, server.valid).filter((file) => !(file in refusals));
    const client = strictObjectApi(api.kubeConfig());
    // Invalid examples first: none of them may exist when a valid one of the same name is applied.
    for (const file of invalidFiles) {
      const expected = refusals[file]?.expect;
      for (const object of objectsOf(project, file)) {
        if (missingKinds.has(groupKind(object))) continue;
        if (expected === undefined) {
          verdicts.push({ item: itemOf(object), failure: 'an invalid example without an expected message in manifest.json' });
          continue;
        }
        const message = await applied(client, object);
        const missing = expected.filter((words) => !(message ?? '').includes(words));
        verdicts.push({
          item: itemOf(object),
          failure: message === undefined ? `accepted; must be refused with ${JSON.stringify(expected)}` : missing.length > 0 ? `refused without ${JSON.stringify(missing)}: ${message}` : undefined,
        });
      }
    }
    // Each valid example is created, not applied over another: samples often share a name
    // (CloudNativePG's dozens of `cluster-example`), so one already made by an earlier file is
    // deleted first. Namespaces stay: examples declare theirs again, and nothing else changes.
    const made = new Set<string>();
    for (const file of validFiles) {
      for (const object of objectsOf(project, file)) {
        if (missingKinds.has(groupKind(object))) continue;
        const key = `${object.apiVersion} ${object.kind} ${object.namespace ?? ''} ${object.name}`;
        if (made.has(key) && object.kind !== 'Namespace') await client.delete(object.body as KubernetesObject);
        const failure = await applied(client, object);
        if (failure === undefined) made.add(key);
        verdicts.push({ item: itemOf(object), failure });
      }
    }
    return discrepancies(project, server, verdicts);
  } finally {
    kubectl.stop();
    await api.close();
    await rm(dir, { recursive: true, force: true });
  }
}

describeKubectl('the CRD corpus (test/data/crds) on the embedded API server', function () {
  this.timeout(120_000);

  for (const project of projects()) {
    for (const server of project.manifest.servers) {
      const title = server.name === '' ? project.manifest.title : `${project.manifest.title}, ${server.name}`;
      it(`${title}: every CRD is established, every invalid example refused with its project's words, every valid one created, but for the listed exceptions`, async () => {
        expect((await runServer(project, server)).join('\n')).to.equal('');
      });
    }
  }
});

describe('the CRD corpus (test/data/crds) is what its origins say', () => {
  it('every vendored file is listed in its ORIGIN.json, with the commit it came from, and every listed file is there', () => {
    for (const project of projects()) {
      const { origin } = project;
      expect(origin.commit, project.dir).to.match(/^[0-9a-f]{40}$/);
      expect(origin.repository, project.dir).to.match(/^https:\/\/github\.com\/[\w.-]+\/[\w.-]+$/);
      const files = yamlFiles(project, ['.']).map((file) => file.replace(/^\.\//, ''));
      expect(files.sort(), project.dir).to.deep.equal(Object.keys(origin.files).sort());
    }
  });

  it('every file of an invalid folder has an expected refusal, and every expected refusal names a file that is there', () => {
    for (const project of projects()) {
      const invalidFolders = project.manifest.servers.flatMap((server) => server.invalid);
      for (const file of yamlFiles(project, invalidFolders)) expect(project.manifest.invalid, `${project.dir}/${file}`).to.have.property(file);
      for (const file of Object.keys(project.manifest.invalid)) expect(existsSync(join(corpusRoot, project.dir, file)), `${project.dir}/${file}`).to.equal(true);
      for (const exception of project.manifest.exceptions) expect(exception.reason, `${project.dir}: ${exception.item}`).to.have.length.above(20);
    }
  });

  it('docs/apiserver-corpus.md states the corpus\'s counts, and docs/apiserver.md their sums', () => {
    const page = readFileSync(new URL('../../docs/apiserver-corpus.md', import.meta.url), 'utf8');
    const sums = { crds: 0, valid: 0, invalid: 0 };
    for (const project of projects()) {
      for (const server of project.manifest.servers) {
        const crds = yamlFiles(project, server.crds).flatMap((file) => objectsOf(project, file)).filter((o) => o.kind === 'CustomResourceDefinition').length;
        const validFiles = yamlFiles(project, server.valid).filter((file) => !(file in project.manifest.invalid));
        const invalidFiles = [...yamlFiles(project, server.invalid), ...yamlFiles(project, server.valid).filter((file) => file in project.manifest.invalid)];
        const valid = validFiles.flatMap((file) => objectsOf(project, file)).length;
        const invalid = invalidFiles.flatMap((file) => objectsOf(project, file)).length;
        const title = server.name === '' ? project.manifest.title : `${project.manifest.title}, ${server.name}`;
        expect(page, title).to.contain(`| ${title} | ${crds} | ${valid} | ${invalid} |`);
        sums.crds += crds;
        sums.valid += valid;
        sums.invalid += invalid;
      }
    }
    const readme = readFileSync(new URL('../../docs/apiserver.md', import.meta.url), 'utf8').replace(/\s+/g, ' ');
    expect(readme).to.contain(`${sums.crds} CRDs, ${sums.valid} valid and ${sums.invalid} invalid example objects`);
  });
});
