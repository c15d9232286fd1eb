import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { stringify } from 'yaml';
import { parseCommandLine, UsageError, type CliIo } from '../util/cli.js';
import { selfSignedCertificates } from '../sinks/webhooks/certificates.js';
import { define, isPipeline, DefinitionError, loadDefinition, placeholderKubeConfig } from './definition.js';
import { openPrivateFile } from '../util/privateFile.js';
import { helmChart, releaseNamespace, type ChartFile } from './helmChart.js';
import { controllerManifests, webhookDnsNames, type ManifestOptions } from './manifests.js';

/**
 * `rxkube manifests <module>`: prints, as one YAML stream for `kubectl
 * apply -f -`, what deploys the controller definition that `<module>`
 * exports (see `ControllerDefinition`); with `--helm <dir>`, writes them as
 * a Helm chart instead (see `helmChart`). Exit codes: 0 printed (or
 * written), 1 the module failed to load, its definition threw or a write
 * failed, 2 a bad command line, a `--helm` folder that is not empty, or a
 * module without a well-formed `definition`.
 */

export const manifestsUsage = `usage: rxkube manifests <module> [options]

Prints the YAML that deploys the controller definition <module> exports
(export function definition(kubeConfig, { namespace }) returning runController's options and its crds):
CRDs, ServiceAccount, Role or ClusterRole and binding with the verbs the wiring needs, Service with
Prometheus scrape annotations, Deployment, and webhook configurations. A .ts module loads through tsx.

options:
  --namespace <ns>        namespace to deploy to (default "default"; it must exist)
  --image <image>         container image (default "<name>:latest")
  --replicas <n>          replicas of the Deployment (default 1)
  --cpu <q>               CPU request (default 100m)
  --memory <q>            memory request and limit (default 128Mi request, 256Mi limit)
  --ca-bundle-file <pem>  CA of the webhooks' serving certificate (cert-manager's, say), whose Secret
                          <name>-webhook-tls something else writes; without it a CA and certificate are
                          made here and the Secret is printed too
  --helm <dir>            write a Helm chart to <dir> (new or empty) instead: Chart.yaml, values.yaml with
                          the options above as defaults, CRDs in crds/, the rest in templates/, in the
                          release's namespace (--namespace then names the one the made certificate is for)
  -h, --help              show this help
`;

function parse(args: string[]) {
  return parseCommandLine({
    args,
    options: {
      namespace: { type: 'string' },
      image: { type: 'string' },
      replicas: { type: 'string' },
      cpu: { type: 'string' },
      memory: { type: 'string' },
      'ca-bundle-file': { type: 'string' },
      helm: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
    allowPositionals: true,
  });
}

const namePattern = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

async function options(values: ReturnType<typeof parse>['values'], name: string, hasWebhooks: boolean): Promise<ManifestOptions> {
  const namespace = values.namespace ?? 'default';
  if (!namePattern.test(namespace)) throw new UsageError(`--namespace must be a namespace name, got ${JSON.stringify(namespace)}`);
  const replicas = values.replicas === undefined ? 1 : Number(values.replicas);
  if (!Number.isSafeInteger(replicas) || replicas < 0 || !/^\d+$/.test(values.replicas ?? '1')) throw new UsageError(`--replicas must be a non-negative integer, got ${JSON.stringify(values.replicas)}`);
  const memory = values.memory;
  const out: ManifestOptions = {
    namespace,
    image: values.image ?? `${name}:latest`,
    replicas,
    resources: { requests: { cpu: values.cpu ?? '100m', memory: memory ?? '128Mi' }, limits: { memory: memory ?? '256Mi' } },
  };
  if (!hasWebhooks) return out;
  const caFile = values['ca-bundle-file'];
  if (caFile !== undefined) {
    const pem = await readFile(caFile, 'utf8').catch((err: unknown) => {
      throw new UsageError(`--ca-bundle-file: cannot read ${caFile}: ${(err as Error).message}`);
    });
    if (!pem.includes('-----BEGIN CERTIFICATE-----')) throw new UsageError(`--ca-bundle-file: ${caFile} holds no PEM certificate`);
    out.webhookCertificate = { caBundle: Buffer.from(pem).toString('base64') };
  } else {
    const made = await selfSignedCertificates({ dnsNames: webhookDnsNames(name, namespace), ipAddresses: [] });
    // forge ends PEM lines with CRLF; LF keeps them block scalars in the YAML.
    const lf = (pem: string): string => pem.replace(/\r\n/g, '\n');
    out.webhookCertificate = { caBundle: made.caBundle, cert: lf(made.cert), key: lf(made.key) };
  }
  return out;
}

/** Refuses a chart folder that holds anything: a chart written over another would keep the other's stale templates. */
async function emptyFolder(dir: string): Promise<void> {
  const entries = await readdir(dir).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return [];
    if (err.code === 'ENOTDIR') throw new UsageError(`--helm: ${dir} is a file, not a folder`);
    throw err;
  });
  if (entries.length > 0) throw new UsageError(`--helm: ${dir} is not empty (it holds ${entries.slice(0, 3).join(', ')}${entries.length > 3 ? ', …' : ''}); name a new or empty folder`);
}

/** Writes the chart's files below `dir`, values holding a private key readable by their owner only, and names each. */
async function writeChart(dir: string, files: ChartFile[], io: CliIo): Promise<void> {
  for (const file of files) {
    const path = join(dir, file.path);
    await mkdir(dirname(path), { recursive: true });
    if (file.private) {
      const handle = await openPrivateFile(path);
      try {
        await handle.writeFile(file.text);
      } finally {
        await handle.close();
      }
    } else {
      await writeFile(path, file.text, { mode: 0o644 });
    }
    io.out(path);
  }
}

/** Runs `rxkube manifests` with its arguments; returns the exit code. */
export async function manifestsCommand(args: string[], io: CliIo): Promise<number> {
  try {
    const { values, positionals } = parse(args);
    if (values.help) {
      io.out(manifestsUsage);
      return 0;
    }
    if (positionals.length !== 1) throw new UsageError(`needs exactly one module, got ${positionals.length === 0 ? 'none' : positionals.map((p) => JSON.stringify(p)).join(' ')}`);
    if (values.helm !== undefined) await emptyFolder(values.helm);
    const definition = await loadDefinition(positionals[0] as string);
    const namespace = values.namespace ?? 'default';
    if (values.helm !== undefined) {
      // Called with a stand-in namespace, which the templates turn into the release's.
      const defined = define(definition, placeholderKubeConfig(), releaseNamespace);
      const { namespace: _certified, ...chartOptions } = await options(values, defined.name, !isPipeline(defined) && defined.webhooks !== undefined);
      await writeChart(values.helm, helmChart(defined, chartOptions), io);
      return 0;
    }
    const defined = define(definition, placeholderKubeConfig(), namespace);
    const objects = controllerManifests(defined, await options(values, defined.name, !isPipeline(defined) && defined.webhooks !== undefined));
    io.out(objects.map((o) => stringify(o, { aliasDuplicateObjects: false, lineWidth: 0 })).join('---\n'));
    return 0;
  } catch (error) {
    if (error instanceof UsageError || error instanceof DefinitionError) {
      io.err(`rxkube manifests: ${error.message}\n(rxkube manifests --help lists the options)`);
      return 2;
    }
    io.err(`rxkube manifests: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
}
