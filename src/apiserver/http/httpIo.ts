import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseYaml } from 'yaml';
import { parseJsonAsYaml } from './jsonAsYaml.js';
import { maxYamlDepth, yamlNestsDeeperThan } from './yamlDepth.js';
import { decodeProtobufObject, protobufMediaType } from './protobuf.js';
import { ApiError, badRequest, requestEntityTooLarge, unsupportedMediaType } from '../api/statusError.js';
import { nestsDeeperThan } from '../../util/jsonDepth.js';

/** Reading request bodies and writing JSON responses, with kube's limits and errors. */

/** kube-apiserver's limit on a request body. */
export const maxBodyBytes = 3 * 1024 * 1024;

export function readBody(req: IncomingMessage, limit = maxBodyBytes): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    req.on('data', (chunk: Buffer) => {
      if (failed) return;
      size += chunk.length;
      if (size > limit) {
        failed = true;
        reject(requestEntityTooLarge(limit));
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (!failed) resolve(Buffer.concat(chunks));
    });
    req.on('error', (error) => {
      if (!failed) {
        failed = true;
        reject(error);
      }
    });
  });
}

/** The media type of a Content-Type header, without parameters, lowercased. */
export function mediaType(header: string | undefined): string {
  return (header ?? '').split(';')[0].trim().toLowerCase();
}

export const objectMediaTypes = ['application/json', 'application/yaml', protobufMediaType] as const;

/** Parses a create/update body in JSON, YAML or (for the kinds kubectl builds) protobuf; other media types are 415, bad syntax 400. */
export function parseObjectBody(body: Buffer, contentType: string | undefined): unknown {
  const type = mediaType(contentType);
  if (type === '' || type === 'application/json' || type === '*/*') return parseJson(body.toString('utf8'));
  if (type === 'application/yaml') return parseYamlBody(body.toString('utf8'));
  if (type === protobufMediaType) return decodeProtobufObject(body);
  throw unsupportedMediaType(type, objectMediaTypes);
}

/**
 * How deep a request body may nest. kube's decoder stops at 10,000 levels; the merge, clone and
 * compare code here is recursive and would run out of stack well before that, so the limit is
 * lower, still far beyond any real object.
 */
export const maxBodyDepth = 1000;

/** Refuses a parsed body nested deeper than {@link maxBodyDepth} (checked without recursion). */
function checkDepth(value: unknown): unknown {
  if (nestsDeeperThan(value, maxBodyDepth)) throw badRequest(`the request body nests more than ${maxBodyDepth} levels deep`);
  return value;
}

export function parseJson(text: string): unknown {
  if (text.trim() === '') throw badRequest('the request body is empty: expected a JSON object');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw badRequest(`the request body is not valid JSON: ${(error as Error).message}`);
  }
  return checkDepth(value);
}

export function parseYamlBody(text: string): unknown {
  if (text.trim() === '') throw badRequest('the request body is empty: expected a YAML or JSON object');
  const json = parseJsonAsYaml(text, maxBodyDepth);
  if (json !== undefined) return json.value;
  if (yamlNestsDeeperThan(text, maxYamlDepth)) throw badRequest(`the request body nests more than ${maxYamlDepth} levels deep`);
  let value: unknown;
  try {
    value = parseYaml(text, { schema: 'core', uniqueKeys: true }) as unknown;
  } catch (error) {
    throw badRequest(`the request body is not valid YAML: ${(error as Error).message}`);
  }
  return checkDepth(value);
}

/** Parses an optional JSON body (DELETE options): empty means none. */
export function parseOptionalJson(text: string): unknown {
  return text.trim() === '' ? undefined : parseJson(text);
}

/**
 * What the server answers to a request that is not a watch: a status, its
 * headers and a body, built whole before anything is written, so that the
 * same answer can go over HTTP or straight to an in-process client.
 */
export interface ApiResponse {
  readonly status: number;
  /** Besides `Content-Type` (JSON, unless set here) and `Content-Length`. */
  readonly headers: Readonly<Record<string, string | string[]>>;
  readonly body: string;
  /** Bytes sent instead of `body` (the protobuf OpenAPI v2 document); `body` is then empty. */
  readonly binary?: Uint8Array;
}

export function jsonTextResponse(status: number, json: string, headers: Record<string, string | string[]> = {}): ApiResponse {
  return { status, headers, body: json };
}

export function jsonResponse(status: number, body: unknown, headers: Record<string, string | string[]> = {}): ApiResponse {
  return jsonTextResponse(status, JSON.stringify(body), headers);
}

export function errorResponse(error: ApiError): ApiResponse {
  return jsonResponse(error.code, error.toStatus(), { ...error.headers });
}

/** Writes a whole answer on an HTTP response (unless one was already sent, or the socket is gone). */
export function writeResponse(res: ServerResponse, response: ApiResponse): void {
  if (res.headersSent || res.destroyed) return;
  const payload = response.binary ?? response.body;
  res.writeHead(response.status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload), ...response.headers });
  res.end(payload);
}

export function sendError(res: ServerResponse, error: ApiError): void {
  writeResponse(res, errorResponse(error));
}
