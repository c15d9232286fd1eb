import {
  boolType,
  bytesType,
  doubleType,
  durationType,
  dynType,
  intType,
  listOf,
  mapOf,
  opaqueType,
  optionalOf,
  stringType,
  timestampType,
  typeType,
  uintType,
  type CelType,
} from './costModel.js';

/**
 * The type of a call's result, as far as the cost estimate needs it (which
 * values are scalars, lists, maps or objects, and what a list holds): the
 * evaluator has no type checker, so this is the part of cel-go's checker
 * the estimate depends on. What it does not know is `dyn`, which the
 * estimate treats as cel-go treats a dynamic value.
 */

const results: ReadonlyMap<string, CelType> = new Map([
  ...['_==_', '_!=_', '_<_', '_<=_', '_>_', '_>=_', '!_', '@not_strictly_false', '@in', 'matches', 'startsWith', 'endsWith', 'contains'].map((n) => [n, boolType] as const),
  ...['isSorted', 'isURL', 'isIP', 'isCIDR', 'isQuantity', 'isSemver', 'sets.contains', 'sets.equivalent', 'sets.intersects', 'ip.isCanonical'].map((n) => [n, boolType] as const),
  ...['containsIP', 'containsCIDR', 'isUnspecified', 'isLoopback', 'isLinkLocalMulticast', 'isLinkLocalUnicast', 'isGlobalUnicast', 'isInteger', 'isGreaterThan', 'isLessThan', 'hasValue'].map((n) => [n, boolType] as const),
  ...['size', 'int', 'indexOf', 'lastIndexOf', 'compareTo', 'sign', 'asInteger', 'prefixLength', 'family', 'major', 'minor', 'patch'].map((n) => [n, intType] as const),
  ...['getFullYear', 'getMonth', 'getDayOfYear', 'getDayOfMonth', 'getDate', 'getDayOfWeek', 'getHours', 'getMinutes', 'getSeconds', 'getMilliseconds'].map((n) => [n, intType] as const),
  ...['string', 'lowerAscii', 'upperAscii', 'substring', 'trim', 'replace', 'join', 'find', 'charAt', 'reverse', 'format', 'strings.quote'].map((n) => [n, stringType] as const),
  ...['getScheme', 'getHostname', 'getHost', 'getPort', 'getEscapedPath', 'base64.encode'].map((n) => [n, stringType] as const),
  ...['split', 'findAll'].map((n) => [n, listOf(stringType)] as const),
  ['double', doubleType],
  ['asApproximateFloat', doubleType],
  ['uint', uintType],
  ['bytes', bytesType],
  ['base64.decode', bytesType],
  ['duration', durationType],
  ['timestamp', timestampType],
  ['type', typeType],
  ['getQuery', mapOf(listOf(stringType))],
  ['url', opaqueType('url')],
  ['quantity', opaqueType('quantity')],
  ['add', opaqueType('quantity')],
  ['sub', opaqueType('quantity')],
  ['ip', opaqueType('ip')],
  ['cidr', opaqueType('cidr')],
  ['masked', opaqueType('cidr')],
  ['semver', opaqueType('semver')],
  ['format.named', optionalOf(opaqueType('format'))],
  ['validate', optionalOf(listOf(stringType))],
  ['optional.none', optionalOf(dynType)],
]);

/** The type of `name(args)` or `target.name(args)`. */
export function resultType(name: string, target: CelType | undefined, args: readonly CelType[]): CelType {
  const [a0] = args;
  if (name === 'ip' && target !== undefined) return opaqueType('ip');
  if (name.startsWith('format.') && name !== 'format.named') return opaqueType('format');
  const fixed = results.get(name);
  if (fixed !== undefined) return fixed;
  switch (name) {
    case 'sum':
    case 'min':
    case 'max':
      return target?.kind === 'list' ? (target.elem ?? dynType) : dynType;
    case '_+_':
    case '_-_':
    case '_*_':
    case '_/_':
    case '_%_':
    case '-_':
      return a0 ?? dynType;
    case 'dyn':
      return dynType;
    case 'optional.of':
    case 'optional.ofNonZeroValue':
      return optionalOf(a0 ?? dynType);
    case 'value':
    case 'orValue':
      return target?.kind === 'optional' ? (target.elem ?? dynType) : dynType;
    case 'or':
      return target ?? dynType;
    default:
      return dynType;
  }
}

/** The type of a field of an object, a map's value, or a list's item (`_[_]`). */
export function memberType(container: CelType, field: string | undefined): CelType {
  if (container.kind === 'struct') return (field === undefined ? undefined : container.fields?.get(field)) ?? dynType;
  if (container.kind === 'map' || container.kind === 'list') return container.elem ?? dynType;
  return dynType;
}

/** The type of a constant. */
export function constantType(kind: string | undefined): CelType {
  switch (kind) {
    case 'boolValue':
      return boolType;
    case 'int64Value':
      return intType;
    case 'uint64Value':
      return uintType;
    case 'doubleValue':
      return doubleType;
    case 'stringValue':
      return stringType;
    case 'bytesValue':
      return bytesType;
    case 'nullValue':
      return { kind: 'null', maxElements: 0, minSize: 0 };
    default:
      return dynType;
  }
}

/** cel-go's scalars: their size is 1 when nothing else says. */
export function isScalar(type: CelType): boolean {
  if (type.kind === 'optional') return type.elem !== undefined && isScalar(type.elem);
  return ['bool', 'double', 'duration', 'int', 'timestamp', 'uint'].includes(type.kind);
}
