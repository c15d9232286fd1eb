/**
 * Kube stores a built-in object as its Go type encodes it: a map or slice field tagged
 * `omitempty` that is empty (or null) is left out, so `env: []`, `nodeSelector: {}` or a
 * template's `annotations: {}` never come back from a write. The few map and slice fields of the
 * served kinds that Go writes even when empty (their `json` tag has no `omitempty`) are listed
 * here, by OpenAPI definition: an empty one stays.
 *
 * Origin: the struct tags of k8s.io/api v0.32.0 (`<group>/<version>/types.go` of
 * github.com/kubernetes/api, tag v0.32.0), every field of a `[]T` or `map[K]V` type (not
 * `[]byte`) whose tag lacks `omitempty`, list kinds' `items` aside. k8s.io/apimachinery's
 * meta/v1 types (ObjectMeta, LabelSelector) tag all of theirs `omitempty`. The apiextensions
 * group is not normalized (see builtinFields.ts).
 */
export const goKeepsEmpty: Readonly<Record<string, readonly string[]>> = {
  'io.k8s.api.core.v1.RBDVolumeSource': ['monitors'],
  'io.k8s.api.core.v1.RBDPersistentVolumeSource': ['monitors'],
  'io.k8s.api.core.v1.CephFSVolumeSource': ['monitors'],
  'io.k8s.api.core.v1.CephFSPersistentVolumeSource': ['monitors'],
  'io.k8s.api.core.v1.ProjectedVolumeSource': ['sources'],
  'io.k8s.api.core.v1.NodeSelector': ['nodeSelectorTerms'],
  'io.k8s.api.core.v1.TopologySelectorLabelRequirement': ['values'],
  'io.k8s.api.core.v1.PodSpec': ['containers'],
  'io.k8s.api.core.v1.ContainerImage': ['names'],
  'io.k8s.api.core.v1.LimitRangeSpec': ['limits'],
  'io.k8s.api.batch.v1.PodFailurePolicyOnExitCodesRequirement': ['values'],
  'io.k8s.api.batch.v1.PodFailurePolicy': ['rules'],
  'io.k8s.api.batch.v1.SuccessPolicy': ['rules'],
  'io.k8s.api.networking.v1.HTTPIngressRuleValue': ['paths'],
  'io.k8s.api.rbac.v1.PolicyRule': ['verbs'],
  'io.k8s.api.rbac.v1.Role': ['rules'],
  'io.k8s.api.rbac.v1.ClusterRole': ['rules'],
  'io.k8s.api.admissionregistration.v1.ValidatingWebhook': ['admissionReviewVersions'],
  'io.k8s.api.admissionregistration.v1.MutatingWebhook': ['admissionReviewVersions'],
  'io.k8s.api.discovery.v1.EndpointSlice': ['endpoints', 'ports'],
  'io.k8s.api.discovery.v1.Endpoint': ['addresses'],
  'io.k8s.api.storage.v1.CSINodeSpec': ['drivers'],
  'io.k8s.api.storage.v1.CSINodeDriver': ['topologyKeys'],
};
