import { expect } from 'chai';
import { stringify } from 'yaml';
import { kindDefaults, matches, objectFor, valueAt } from './defaultsTable.js';
import { describeKubectl, kubectlAgainstServer } from './kubectl.helpers.js';

/**
 * kubectl 1.32 against the embedded server's defaulting (issue 40, item 3): what `kubectl create`
 * gets back carries the defaults of kube-apiserver 1.32's table, a client-side `kubectl apply` of
 * the same manifest twice says `unchanged`, and a server-side apply owns what it applied, never
 * a defaulted field.
 */

/** The kinds, with the name kubectl prints them by. */
const kinds = [
  { kind: 'Deployment', resource: 'deployments', printed: 'deployment.apps' },
  { kind: 'StatefulSet', resource: 'statefulsets', printed: 'statefulset.apps' },
  { kind: 'Job', resource: 'jobs', printed: 'job.batch' },
  { kind: 'Service', resource: 'services', printed: 'service' },
];

/** The defaulted fields a server-side apply of the table's object must not own. */
const notOwned: Record<string, string[]> = {
  Deployment: ['f:revisionHistoryLimit', 'f:progressDeadlineSeconds', 'f:strategy', 'f:replicas', 'f:dnsPolicy', 'f:schedulerName', 'f:imagePullPolicy', 'f:terminationMessagePath', 'f:protocol'],
  StatefulSet: ['f:podManagementPolicy', 'f:updateStrategy', 'f:persistentVolumeClaimRetentionPolicy', 'f:revisionHistoryLimit', 'f:volumeMode', 'f:restartPolicy'],
  Job: ['f:backoffLimit', 'f:completions', 'f:parallelism', 'f:podReplacementPolicy', 'f:selector', 'f:manualSelector', 'f:imagePullPolicy'],
  Service: ['f:type', 'f:sessionAffinity', 'f:clusterIP', 'f:clusterIPs', 'f:ipFamilies', 'f:targetPort', 'f:protocol', 'f:internalTrafficPolicy'],
};

function manifest(kind: string, name: string, given?: Record<string, unknown>): string {
  return stringify(objectFor(kindDefaults(kind), given, name));
}

/**
 * kubectl's three-way merge replaces a list without a merge key whenever the live list differs
 * from the manifest's, and kube defaults inside a StatefulSet's volumeClaimTemplates (volumeMode,
 * status.phase): a real cluster answers `configured` to every apply of one that has them (the
 * patch then changes nothing). The apply-twice check runs without them; the next test shows the rest.
 */
const applyGiven: Record<string, Record<string, unknown>> = { StatefulSet: { spec: { volumeClaimTemplates: null } } };

/** The table's defaults of the kind's plain object that the returned object lacks, with what it has there. */
function missingDefaults(kind: string, returned: Record<string, unknown>): string[] {
  return kindDefaults(kind)
    .defaults.filter((entry) => entry.given === undefined && !matches(entry, returned))
    .map((entry) => `${entry.path}: ${JSON.stringify(valueAt(returned, entry.path))}`);
}

describeKubectl('kubectl and built-in defaults', function () {
  this.timeout(60_000);
  const suite = kubectlAgainstServer('rxkube-kubectl-defaults-');

  for (const { kind, resource, printed } of kinds) {
    it(`kubectl create of a ${kind} returns kube 1.32's defaults, and kubectl apply of it twice says unchanged`, async () => {
      const name = `${resource.slice(0, -1)}-create`;
      await suite.k.ok(['create', '-f', '-'], manifest(kind, name));
      const returned = JSON.parse(await suite.k.ok(['get', resource, name, '-o', 'json'])) as Record<string, unknown>;
      expect(missingDefaults(kind, returned)).to.deep.equal([]);

      const applied = `${resource.slice(0, -1)}-apply`;
      expect(await suite.k.ok(['apply', '-f', '-'], manifest(kind, applied, applyGiven[kind]))).to.contain('created');
      const before = JSON.parse(await suite.k.ok(['get', resource, applied, '-o', 'json'])) as { metadata: { resourceVersion: string } };
      expect(await suite.k.ok(['apply', '-f', '-'], manifest(kind, applied, applyGiven[kind]))).to.equal(`${printed}/${applied} unchanged\n`);
      const after = JSON.parse(await suite.k.ok(['get', resource, applied, '-o', 'json'])) as { metadata: { resourceVersion: string } };
      expect(after.metadata.resourceVersion).to.equal(before.metadata.resourceVersion);
    });

    if (kind === 'StatefulSet') {
      it('kubectl apply of a StatefulSet with volumeClaimTemplates twice says configured, as kube does, and changes nothing', async () => {
        const name = 'statefulset-claims';
        await suite.k.ok(['apply', '-f', '-'], manifest(kind, name));
        const before = JSON.parse(await suite.k.ok(['get', resource, name, '-o', 'json'])) as { metadata: { resourceVersion: string } };
        expect(await suite.k.ok(['apply', '-f', '-'], manifest(kind, name))).to.equal(`${printed}/${name} configured\n`);
        const after = JSON.parse(await suite.k.ok(['get', resource, name, '-o', 'json'])) as { metadata: { resourceVersion: string } };
        expect(after.metadata.resourceVersion).to.equal(before.metadata.resourceVersion);
      });
    }

    it(`kubectl apply --server-side of a ${kind} owns what it applied, no defaulted field, and a second apply changes nothing`, async () => {
      const name = `${resource.slice(0, -1)}-ssa`;
      await suite.k.ok(['apply', '--server-side', '-f', '-'], manifest(kind, name));
      const first = JSON.parse(await suite.k.ok(['get', resource, name, '-o', 'json', '--show-managed-fields'])) as {
        metadata: { resourceVersion: string; managedFields: { manager: string; operation: string; fieldsV1: unknown }[] };
      };
      const entries = first.metadata.managedFields;
      expect(entries.map((e) => `${e.manager} ${e.operation}`)).to.deep.equal(['kubectl Apply']);
      const owned = JSON.stringify(entries[0]?.fieldsV1);
      expect(owned).to.contain('f:ports');
      for (const field of notOwned[kind] ?? []) expect(owned, field).not.to.contain(`"${field}"`);
      expect(missingDefaults(kind, first as unknown as Record<string, unknown>)).to.deep.equal([]);
      expect(await suite.k.ok(['apply', '--server-side', '-f', '-'], manifest(kind, name))).to.equal(`${printed}/${name} serverside-applied\n`);
      const second = JSON.parse(await suite.k.ok(['get', resource, name, '-o', 'json'])) as { metadata: { resourceVersion: string } };
      expect(second.metadata.resourceVersion).to.equal(first.metadata.resourceVersion);
    });
  }
});
