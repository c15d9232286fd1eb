import { BinaryWriter, WireType } from '@bufbuild/protobuf/wire';
import { isPlainObject } from '../../util/json.js';

/**
 * `/openapi/v2` in protobuf, the form kubectl and client-go ask for
 * (`Accept: application/com.github.proto-openapi.spec.v2@v1.0+protobuf`): the JSON document as
 * gnostic's `openapi.v2.Document` message, which kube-apiserver makes the same way (kube-openapi's
 * `ToProtoBinary` parses the JSON spec with gnostic and marshals it). Field numbers are those of
 * gnostic's OpenAPIv2.proto. What the message cannot hold is left out, as gnostic leaves it out:
 * keywords Swagger 2.0 lacks (`oneOf`, `anyOf`, `not`, `nullable`), and zero values (proto3
 * writes no default). Extension values (`x-...`), `default`, `enum` and `example` travel as YAML
 * text, as gnostic keeps them (here in JSON's flow style). A schema that is `allOf` one reference becomes that reference, as
 * kube's own v2 document writes a field of a named type (`metadata`).
 */

type Json = Readonly<Record<string, unknown>>;
type Write = (w: BinaryWriter) => void;

function message(w: BinaryWriter, field: number, write: Write): void {
  w.tag(field, WireType.LengthDelimited).fork();
  write(w);
  w.join();
}

function text(w: BinaryWriter, field: number, value: unknown): void {
  if (typeof value === 'string' && value !== '') w.tag(field, WireType.LengthDelimited).string(value);
}

function texts(w: BinaryWriter, field: number, value: unknown): void {
  if (Array.isArray(value)) for (const item of value) if (typeof item === 'string') w.tag(field, WireType.LengthDelimited).string(item);
}

function flag(w: BinaryWriter, field: number, value: unknown): void {
  if (value === true) w.tag(field, WireType.Varint).bool(true);
}

function double(w: BinaryWriter, field: number, value: unknown): void {
  if (typeof value === 'number' && value !== 0) w.tag(field, WireType.Bit64).double(value);
}

function int64(w: BinaryWriter, field: number, value: unknown): void {
  if (typeof value === 'number' && Number.isInteger(value) && value !== 0) w.tag(field, WireType.Varint).int64(value);
}

/** gnostic's `Any`: the value as YAML text (field 2), written as JSON, which is YAML too and much quicker to write. */
function any(w: BinaryWriter, field: number, value: unknown): void {
  if (value === undefined) return;
  message(w, field, (m) => m.tag(2, WireType.LengthDelimited).string(JSON.stringify(value)));
}

/** The `x-...` members of an object, as repeated `NamedAny` {name, value}. */
function extensions(w: BinaryWriter, field: number, object: Json): void {
  for (const [name, value] of Object.entries(object)) {
    if (!name.startsWith('x-')) continue;
    message(w, field, (m) => {
      text(m, 1, name);
      any(m, 2, value);
    });
  }
}

/** `repeated Named<T>` {name = 1, value = 2} of an object's members. */
function named(w: BinaryWriter, field: number, object: unknown, value: (w: BinaryWriter, field: number, v: Json) => void): void {
  if (!isPlainObject(object)) return;
  for (const [name, v] of Object.entries(object)) {
    if (!isPlainObject(v)) continue;
    message(w, field, (m) => {
      text(m, 1, name);
      value(m, 2, v);
    });
  }
}

function schema(w: BinaryWriter, field: number, s: Json): void {
  message(w, field, (m) => schemaFields(m, s));
}

function schemaFields(w: BinaryWriter, s: Json): void {
  const allOf = Array.isArray(s.allOf) ? s.allOf.filter(isPlainObject) : [];
  const onlyRef = s.$ref === undefined && allOf.length === 1 && typeof allOf[0]?.$ref === 'string' ? allOf[0].$ref : undefined;
  text(w, 1, s.$ref ?? onlyRef);
  text(w, 2, s.format);
  text(w, 3, s.title);
  text(w, 4, s.description);
  any(w, 5, s.default);
  double(w, 6, s.multipleOf);
  double(w, 7, s.maximum);
  flag(w, 8, s.exclusiveMaximum);
  double(w, 9, s.minimum);
  flag(w, 10, s.exclusiveMinimum);
  int64(w, 11, s.maxLength);
  int64(w, 12, s.minLength);
  text(w, 13, s.pattern);
  int64(w, 14, s.maxItems);
  int64(w, 15, s.minItems);
  flag(w, 16, s.uniqueItems);
  int64(w, 17, s.maxProperties);
  int64(w, 18, s.minProperties);
  texts(w, 19, s.required);
  if (Array.isArray(s.enum)) for (const value of s.enum) any(w, 20, value);
  if (isPlainObject(s.additionalProperties)) message(w, 21, (m) => schema(m, 1, s.additionalProperties as Json));
  else if (typeof s.additionalProperties === 'boolean') message(w, 21, (m) => m.tag(2, WireType.Varint).bool(s.additionalProperties as boolean));
  const type = typeof s.type === 'string' ? [s.type] : s.type;
  if (Array.isArray(type) && type.length > 0) message(w, 22, (m) => texts(m, 1, type));
  const items = isPlainObject(s.items) ? [s.items] : Array.isArray(s.items) ? s.items.filter(isPlainObject) : [];
  if (items.length > 0) message(w, 23, (m) => items.forEach((item) => schema(m, 1, item)));
  if (onlyRef === undefined) for (const part of allOf) schema(w, 24, part);
  if (isPlainObject(s.properties)) message(w, 25, (m) => named(m, 1, s.properties, schema));
  text(w, 26, s.discriminator);
  flag(w, 27, s.readOnly);
  any(w, 30, s.example);
  extensions(w, 31, s);
}

/** A parameter: a body parameter, or a header, form, query or path one (the sub-schemas differ in field numbers). */
function parameter(w: BinaryWriter, p: Json): void {
  message(w, 8, (item) =>
    message(item, 1, (param) => {
      if (p.in === 'body') {
        message(param, 1, (b) => {
          text(b, 1, p.description);
          text(b, 2, p.name);
          text(b, 3, p.in);
          flag(b, 4, p.required);
          if (isPlainObject(p.schema)) schema(b, 5, p.schema);
          extensions(b, 6, p);
        });
        return;
      }
      // query and formData have allow_empty_value (5), which moves their later fields by one.
      const sub = { header: 1, formData: 2, query: 3, path: 4 }[String(p.in)] ?? 3;
      const shift = sub === 2 || sub === 3 ? 1 : 0;
      message(param, 2, (nonBody) =>
        message(nonBody, sub, (q) => {
          flag(q, 1, p.required);
          text(q, 2, p.in);
          text(q, 3, p.description);
          text(q, 4, p.name);
          if (shift === 1) flag(q, 5, p.allowEmptyValue);
          text(q, 5 + shift, p.type);
          text(q, 6 + shift, p.format);
          flag(q, 19 + shift, p.uniqueItems);
        }),
      );
    }),
  );
}

function operation(w: BinaryWriter, field: number, op: Json): void {
  message(w, field, (m) => {
    texts(m, 1, op.tags);
    text(m, 2, op.summary);
    text(m, 3, op.description);
    text(m, 5, op.operationId);
    texts(m, 6, op.produces);
    texts(m, 7, op.consumes);
    if (Array.isArray(op.parameters)) for (const p of op.parameters) if (isPlainObject(p)) parameter(m, p);
    if (isPlainObject(op.responses)) {
      message(m, 9, (responses) =>
        named(responses, 1, op.responses, (r, f, response) =>
          message(r, f, (value) =>
            message(value, 1, (res) => {
              text(res, 1, response.description);
              if (isPlainObject(response.schema)) message(res, 2, (item) => schema(item, 1, response.schema as Json));
            }),
          ),
        ),
      );
    }
    flag(m, 11, op.deprecated);
    extensions(m, 13, op);
  });
}

const methods = { get: 2, put: 3, post: 4, delete: 5, options: 6, head: 7, patch: 8 } as const;

function pathItem(w: BinaryWriter, field: number, item: Json): void {
  message(w, field, (m) => {
    for (const [method, number] of Object.entries(methods)) {
      const op = item[method];
      if (isPlainObject(op)) operation(m, number, op);
    }
    extensions(m, 10, item);
  });
}

/** The gnostic `openapi.v2.Document` of a Swagger 2.0 document (parsed JSON). */
export function openApiV2Protobuf(doc: Json): Uint8Array {
  const w = new BinaryWriter();
  text(w, 1, doc.swagger);
  if (isPlainObject(doc.info)) {
    const info = doc.info;
    message(w, 2, (m) => {
      text(m, 1, info.title);
      text(m, 2, info.version);
      text(m, 3, info.description);
    });
  }
  texts(w, 6, doc.consumes);
  texts(w, 7, doc.produces);
  if (isPlainObject(doc.paths)) message(w, 8, (m) => named(m, 2, doc.paths, pathItem));
  if (isPlainObject(doc.definitions)) message(w, 9, (m) => named(m, 1, doc.definitions, schema));
  extensions(w, 16, doc);
  return w.finish();
}
