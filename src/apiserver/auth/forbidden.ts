import { ApiError, qualifiedResource, type StatusDetails } from '../api/statusError.js';
import type { RequestAttributes } from './requestAttributes.js';

/**
 * The 403 a refused request gets, worded as kube-apiserver's authorization
 * filter words it:
 *   pods is forbidden: User "u" cannot list resource "pods" in API group "" in the namespace "x"
 *   deployments.apps "web" is forbidden: User "u" cannot get resource "deployments/scale" in API group "apps" in the namespace "x"
 *   nodes is forbidden: User "u" cannot list resource "nodes" in API group "" at the cluster scope
 *   forbidden: User "u" cannot get path "/metrics"
 * followed by `: <reason>` when the authorizer gave one.
 */
export function refusalMessage(user: string, request: RequestAttributes): string {
  if (!request.resourceRequest) return `User ${JSON.stringify(user)} cannot ${request.verb} path ${JSON.stringify(request.path)}`;
  const resource = request.subresource === '' ? request.resource : `${request.resource}/${request.subresource}`;
  const scope = request.namespace === '' ? 'at the cluster scope' : `in the namespace ${JSON.stringify(request.namespace)}`;
  return `User ${JSON.stringify(user)} cannot ${request.verb} resource ${JSON.stringify(resource)} in API group ${JSON.stringify(request.apiGroup)} ${scope}`;
}

/** As kube, nothing in the message may look like HTML. */
function sanitized(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}

export function forbiddenRequest(user: string, request: RequestAttributes, reason: string): ApiError {
  const message = sanitized(refusalMessage(user, request));
  const why = reason === '' ? message : `${message}: ${reason}`;
  const gr = { group: request.apiGroup, resource: request.resource };
  const details: StatusDetails = {};
  if (request.name !== '') details.name = request.name;
  if (gr.group !== '') details.group = gr.group;
  if (gr.resource !== '') details.kind = gr.resource;
  const subject = gr.resource === '' ? '' : request.name === '' ? `${qualifiedResource(gr)} is ` : `${qualifiedResource(gr)} ${JSON.stringify(request.name)} is `;
  return new ApiError(403, 'Forbidden', `${subject}forbidden: ${why}`, details);
}
