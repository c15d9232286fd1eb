import { isDeepStrictEqual } from 'node:util';
import type { KubeObject } from '../../types.js';
import type { Cluster } from '../cluster.js';
import type { ResourceType } from '../api/resourceType.js';
import { labelSelectorFromObject, type LabelSelectorObject } from '../selectors/labelSelector.js';
import { SelectorError } from '../selectors/selectorError.js';
import type { PolicyRule } from './policyRule.js';
import { rbacGroup } from './rbacResources.js';

/**
 * Kube's clusterrole-aggregation controller: a ClusterRole with an
 * `aggregationRule` has as its rules the union of the rules of every other
 * ClusterRole its `clusterRoleSelectors` select (in name order, each rule
 * once), rewritten whenever a ClusterRole changes, before the request that
 * changed it answers. Aggregated roles may select aggregated roles (kube's
 * admin ⊇ edit ⊇ view); each rewrite is a change that runs it again, until
 * nothing changes. A selector that is no label selector selects nothing.
 */
const manager = 'clusterrole-aggregation-controller';

interface ClusterRole extends KubeObject {
  aggregationRule?: { clusterRoleSelectors?: LabelSelectorObject[] };
  rules?: PolicyRule[];
}

export class ClusterRoleAggregation {
  private pending = false;
  private readonly stop: () => void;

  constructor(private readonly cluster: Cluster) {
    const type = this.type;
    this.stop = cluster.store.subscribe((event) => {
      if (event.storageKey !== type.storageKey || this.pending) return;
      this.pending = true;
      cluster.enqueue(() => {
        this.pending = false;
        this.aggregate();
      });
    });
  }

  private get type(): ResourceType {
    return this.cluster.registry.lookup(rbacGroup, 'v1', 'clusterroles') as ResourceType;
  }

  close(): void {
    this.stop();
  }

  private selects(selectors: readonly LabelSelectorObject[], role: ClusterRole): boolean {
    return selectors.some((s) => {
      try {
        return labelSelectorFromObject(s).matches(role.metadata.labels);
      } catch (error) {
        if (error instanceof SelectorError) return false;
        throw error;
      }
    });
  }

  /** One pass over every aggregated ClusterRole. */
  private aggregate(): void {
    const type = this.type;
    const { keys, objects } = this.cluster.store.current(type.storageKey);
    const roles = keys.map((k) => objects.get(k)?.object as ClusterRole);
    for (const role of roles) {
      const selectors = role.aggregationRule?.clusterRoleSelectors;
      if (selectors === undefined) continue;
      const rules: PolicyRule[] = [];
      for (const other of roles) {
        if (other.metadata.name === role.metadata.name || !this.selects(selectors, other)) continue;
        for (const r of other.rules ?? []) if (!rules.some((seen) => isDeepStrictEqual(seen, r))) rules.push(r);
      }
      if (isDeepStrictEqual(role.rules ?? [], rules)) continue;
      const live = this.cluster.find(type, undefined, role.metadata.name as string);
      if (live !== undefined) this.cluster.mutate(type, live, (draft) => void ((draft as ClusterRole).rules = rules), manager);
    }
  }
}
