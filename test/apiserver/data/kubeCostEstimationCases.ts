/**
 * Test data vendored from Kubernetes: the cases of `TestCostEstimation` in
 * staging/src/k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/compilation_test.go
 * (kubernetes/kubernetes, Apache-2.0), rewritten as JSON schemas. Each case
 * is a rule on a schema built by one of that file's generators, once with
 * no bound (`calc`: kube's expected estimate) and once with the bound
 * `setMaxElements` put where the generator puts it (`set`). The rule's
 * level is not a resource root. `calcOver` means kube only checks that the
 * estimate exceeds its per-call limit (1,000,000). A case kube leaves
 * unchecked (expected 0) is left out.
 */

export type Schema = Record<string, unknown>;
type Gen = (max: number | undefined) => Schema;

const bound = (key: string, max: number | undefined): Schema => (max === undefined ? {} : { [key]: max });
const withRule = (schema: Schema, rule: string): Schema => ({ ...schema, 'x-kubernetes-validations': [{ rule }] });

/** parseRuleType: duration, date and date-time are string formats; int-or-string has no type. */
function scalar(type: string): Schema {
  if (type === 'duration' || type === 'date' || type === 'date-time') return { type: 'string', format: type };
  if (type === 'int-or-string') return { 'x-kubernetes-int-or-string': true };
  return { type };
}

const arrayWithRule = (type: string, rule: string): Gen => (max) => withRule({ type: 'array', items: scalar(type), ...bound('maxItems', max) }, rule);
const arrayOfArraysWithRule = (type: string, rule: string): Gen => (max) => withRule({ type: 'array', items: { type: 'array', items: { type } }, ...bound('maxItems', max) }, rule);
const objectWithRequired: Schema = { type: 'object', properties: { required: { type: 'string' }, optional: { type: 'string' } }, required: ['required'] };
const objectArrayWithRule = (rule: string): Gen => (max) => withRule({ type: 'array', items: objectWithRequired, ...bound('maxItems', max) }, rule);
const mapArrayWithRule = (type: string, rule: string): Gen => (max) => withRule({ type: 'array', items: { type: 'object', additionalProperties: { type } }, ...bound('maxItems', max) }, rule);
const mapWithRule = (type: string, rule: string): Gen => (max) => withRule({ type: 'object', additionalProperties: scalar(type), ...bound('maxProperties', max) }, rule);
const mapWithItemRule = (item: Schema, rule: string): Gen => (max) => withRule({ type: 'object', additionalProperties: item, ...bound('maxProperties', max) }, rule);
const stringWithRule = (rule: string): Gen => (max) => withRule({ type: 'string', ...bound('maxLength', max) }, rule);
const bytesWithRule = (rule: string): Gen => (max) => withRule({ type: 'string', format: 'byte', ...bound('maxLength', max) }, rule);
const enumWithRule = (rule: string, ...values: string[]): Gen => (max) => withRule({ type: 'string', enum: values, ...bound('maxLength', max) }, rule);
const nestedSpecWithRule = (rule: string): Gen => (max) => withRule({ type: 'object', additionalProperties: { type: 'string', ...bound('maxLength', max) }, ...bound('maxProperties', max) }, rule);
const nestedRootRule = (all: boolean, rule: string): Gen => (max) =>
  withRule(
    {
      type: 'array',
      items: { type: 'object', additionalProperties: { ...objectWithRequired, ...(all ? bound('maxProperties', max) : {}) }, ...bound('maxProperties', max) },
      ...(all ? bound('maxItems', max) : {}),
    },
    rule,
  );
const stringArray = (rule: string): Gen => (max) => withRule({ type: 'array', items: { type: 'string', ...bound('maxLength', max) }, ...bound('maxItems', max) }, rule);
const replaceObject = (rule: string): Gen => (max) =>
  withRule({ type: 'object', properties: { str: { type: 'string', ...bound('maxLength', max) }, before: { type: 'string', maxLength: 2 }, after: { type: 'string', maxLength: 4 } } }, rule);
const splitObject = (rule: string): Gen => (max) => withRule({ type: 'object', properties: { str: { type: 'string', ...bound('maxLength', max) }, separator: { type: 'string', ...bound('maxLength', max) } } }, rule);
const lowerAscii = (rule: string): Gen => (max) => withRule({ type: 'string', ...bound('maxLength', max) }, rule);

export interface CostCase {
  name: string;
  schema: Gen;
  setMaxElements: number;
  calc?: number;
  calcOver?: number;
  set?: number;
}

export const kubeCostCases: readonly CostCase[] = [
  { name: 'number array with all', schema: arrayWithRule('number', 'self.all(x, true)'), calc: 4718591, setMaxElements: 10, set: 32 },
  { name: 'string array with all', schema: arrayWithRule('string', 'self.all(x, true)'), calc: 3145727, setMaxElements: 20, set: 62 },
  { name: 'boolean array with all', schema: arrayWithRule('boolean', 'self.all(x, true)'), calc: 1887437, setMaxElements: 5, set: 17 },
  { name: 'array of number arrays with all', schema: arrayOfArraysWithRule('number', 'self.all(x, true)'), calc: 3145727, setMaxElements: 100, set: 302 },
  { name: 'array of objects with all', schema: objectArrayWithRule('self.all(x, true)'), calc: 555128, setMaxElements: 50, set: 152 },
  { name: 'map of numbers with all', schema: mapWithRule('number', 'self.all(x, true)'), calc: 1348169, setMaxElements: 10, set: 32 },
  { name: 'map of strings with all', schema: mapWithRule('string', 'self.all(x, true)'), calc: 1179647, setMaxElements: 3, set: 11 },
  { name: 'map of booleans with all', schema: mapWithRule('boolean', 'self.all(x, true)'), calc: 943718, setMaxElements: 100, set: 302 },
  { name: 'string with contains', schema: stringWithRule("self.contains('test')"), calc: 314574, setMaxElements: 10, set: 5 },
  { name: 'string with startsWith', schema: stringWithRule("self.startsWith('test')"), calc: 2, setMaxElements: 15, set: 2 },
  { name: 'string with endsWith', schema: stringWithRule("self.endsWith('test')"), calc: 2, setMaxElements: 30, set: 2 },
  { name: 'concat string', schema: stringWithRule('size(self + "hello") > size("hello")'), calc: 314578, setMaxElements: 4, set: 7 },
  { name: 'index of array with numbers', schema: arrayWithRule('number', 'self[1] == 0.0'), calc: 2, setMaxElements: 5000, set: 2 },
  { name: 'index of array with strings', schema: arrayWithRule('string', 'self[1] == self[1]'), calc: 314577, setMaxElements: 8, set: 314577 },
  { name: 'O(n^2) loop with numbers', schema: arrayWithRule('number', 'self.all(x, self.all(y, true))'), calcOver: 1000000, setMaxElements: 10, set: 352 },
  { name: 'O(n^3) loop with numbers', schema: arrayWithRule('number', 'self.all(x, self.all(y, self.all(z, true)))'), calcOver: 1000000, setMaxElements: 10, set: 3552 },
  { name: 'regex matches simple', schema: stringWithRule('self.matches("x")'), calc: 314574, setMaxElements: 50, set: 22 },
  { name: 'regex matches empty string', schema: stringWithRule('"".matches("(((((((((())))))))))[0-9]")'), calc: 7, setMaxElements: 10, set: 7 },
  { name: 'regex matches empty regex', schema: stringWithRule('self.matches("")'), calc: 1, setMaxElements: 100, set: 1 },
  { name: 'map of strings with value length', schema: nestedSpecWithRule('self.all(x, x.contains(self[x]))'), calc: 2752507, setMaxElements: 10, set: 72 },
  { name: 'set array maxLength to zero', schema: arrayWithRule('number', 'self[3] == 0.0'), calc: 2, setMaxElements: 0, set: 2 },
  { name: 'set map maxLength to zero', schema: mapWithRule('number', 'self["x"] == 0.0'), calc: 2, setMaxElements: 0, set: 2 },
  { name: 'set string maxLength to zero', schema: stringWithRule('self == "x"'), calc: 2, setMaxElements: 0, set: 1 },
  { name: 'set bytes maxLength to zero', schema: bytesWithRule('self == b"x"'), calc: 2, setMaxElements: 0, set: 1 },
  { name: 'set maxLength greater than estimated maxLength', schema: arrayWithRule('number', 'self.all(x, x == 0.0)'), calc: 6291454, setMaxElements: 3 * 1024 * 2048, set: 25165826 },
  { name: 'nested types with root rule with all supporting maxLength', schema: nestedRootRule(true, 'self.all(x, x["y"].required == "z")'), calc: 7340027, setMaxElements: 10, set: 72 },
  { name: 'nested types with root rule with one supporting maxLength', schema: nestedRootRule(false, 'self.all(x, x["y"].required == "z")'), calc: 7340027, setMaxElements: 10, set: 7340027 },
  { name: 'int-or-string array with all', schema: arrayWithRule('int-or-string', 'self.all(x, true)'), calc: 4718591, setMaxElements: 10, set: 32 },
  { name: 'index of array with int-or-strings', schema: arrayWithRule('int-or-string', 'self[0] == 5'), calc: 3, setMaxElements: 10, set: 3 },
  { name: 'index of array with booleans', schema: arrayWithRule('boolean', 'self[0] == false'), calc: 2, setMaxElements: 25, set: 2 },
  { name: 'index of array of objects', schema: objectArrayWithRule('self[0] == null'), calc: 2, setMaxElements: 422, set: 2 },
  { name: 'index of array of array of numnbers', schema: arrayOfArraysWithRule('number', 'self[0][0] == -1.0'), calc: 3, setMaxElements: 51, set: 3 },
  { name: 'array of number maps with all', schema: mapArrayWithRule('number', 'self.all(x, x.y == 25.2)'), calc: 6291452, setMaxElements: 12, set: 74 },
  { name: 'index of array of number maps', schema: mapArrayWithRule('number', 'self[0].x > 2.0'), calc: 4, setMaxElements: 3000, set: 4 },
  { name: 'duration array with all', schema: arrayWithRule('duration', 'self.all(x, true)'), calc: 2359295, setMaxElements: 5, set: 17 },
  { name: 'index of duration array', schema: arrayWithRule('duration', 'self[0].getHours() == 2'), calc: 4, setMaxElements: 525, set: 4 },
  { name: 'date array with all', schema: arrayWithRule('date', 'self.all(x, true)'), calc: 725936, setMaxElements: 15, set: 47 },
  { name: 'index of date array', schema: arrayWithRule('date', 'self[2].getDayOfMonth() == 13'), calc: 4, setMaxElements: 42, set: 4 },
  { name: 'date-time array with all', schema: arrayWithRule('date-time', 'self.all(x, true)'), calc: 428963, setMaxElements: 25, set: 77 },
  { name: 'index of date-time array', schema: arrayWithRule('date-time', 'self[2].getMinutes() == 45'), calc: 4, setMaxElements: 99, set: 4 },
  { name: 'map of int-or-strings with all', schema: mapWithRule('int-or-string', 'self.all(x, true)'), calc: 1348169, setMaxElements: 15, set: 47 },
  { name: 'map of objects with all', schema: mapWithItemRule(objectWithRequired, 'self.all(x, true)'), calc: 428963, setMaxElements: 20, set: 62 },
  { name: 'map of number maps with all', schema: mapWithItemRule({ type: 'object', additionalProperties: { type: 'number' } }, 'self.all(x, true)'), calc: 1179647, setMaxElements: 10, set: 32 },
  { name: 'map of number arrays with all', schema: mapWithItemRule({ type: 'array', items: { type: 'number' } }, 'self.all(x, true)'), calc: 1179647, setMaxElements: 25, set: 77 },
  { name: 'map of durations with all', schema: mapWithRule('duration', 'self.all(x, true)'), calc: 1048577, setMaxElements: 5, set: 17 },
  { name: 'map of dates with all', schema: mapWithRule('date', 'self.all(x, true)'), calc: 524288, setMaxElements: 10, set: 32 },
  { name: 'map of date-times with all', schema: mapWithRule('date-time', 'self.all(x, true)'), calc: 349526, setMaxElements: 25, set: 77 },
  { name: 'extended library regex find', schema: stringWithRule("self.find('[0-9]+') == ''"), calc: 629147, setMaxElements: 10, set: 11 },
  { name: 'extended library join', schema: stringArray("self.join(' ') == 'aa bb'"), calc: 329853068905, setMaxElements: 10, set: 43 },
  { name: 'extended library isSorted', schema: stringArray('self.isSorted() == true'), calc: 329854432052, setMaxElements: 10, set: 52 },
  { name: 'extended library replace', schema: replaceObject("self.str.replace(self.before, self.after) == 'does not matter'"), calc: 629154, setMaxElements: 4, set: 12 },
  { name: 'extended library split', schema: splitObject('self.str.split(self.separator) == []'), calc: 629160, setMaxElements: 10, set: 22 },
  { name: 'extended library lowerAscii', schema: lowerAscii("self.lowerAscii() == 'lower!'"), calc: 314575, setMaxElements: 10, set: 6 },
  { name: 'check cost of size call', schema: mapWithRule('integer', 'oldSelf.size() == self.size()'), calc: 5, setMaxElements: 10, set: 5 },
  { name: 'check cost of timestamp comparison', schema: mapWithRule('date-time', 'self["a"] == self["b"]'), calc: 8, setMaxElements: 7, set: 8 },
  { name: 'check cost of duration comparison', schema: mapWithRule('duration', 'self["c"] == self["d"]'), calc: 8, setMaxElements: 42, set: 8 },
  { name: 'enums with maxLength equals to the longest possible value', schema: enumWithRule("self.contains('A')", 'A', 'B', 'C', 'LongValue'), calc: 2, setMaxElements: 1000, set: 401 },
];
