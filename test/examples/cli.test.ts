import { expect } from 'chai';
import { parseCommandLine, UsageError, usageText, type OptionSpec } from '../../examples/support/cli.js';

const specs = {
  kubeconfig: { kind: 'string', value: 'path', help: 'the cluster' },
  pace: { kind: 'integer', value: 'ms', help: 'pause' },
  'step-timeout': { kind: 'integer', value: 'ms', min: 1, help: 'step timeout' },
  'log-format': { kind: 'choice', value: 'json|pretty', choices: ['json', 'pretty'], help: 'format' },
  verbose: { kind: 'switch', help: 'say more' },
} as const satisfies Record<string, OptionSpec>;

describe('the example programs\' command lines (parseCommandLine)', () => {
  it('reads every form of option, integers as numbers, and leaves absent ones undefined', () => {
    expect(parseCommandLine(['--pace', '0', '--step-timeout=250', '--log-format', 'pretty', '--verbose', '--kubeconfig', '/k'], specs)).to.deep.equal({
      help: false,
      options: { kubeconfig: '/k', pace: 0, 'step-timeout': 250, 'log-format': 'pretty', verbose: true },
    });
    expect(parseCommandLine([], specs)).to.deep.equal({
      help: false,
      options: { kubeconfig: undefined, pace: undefined, 'step-timeout': undefined, 'log-format': undefined, verbose: undefined },
    });
  });

  it('answers --help and -h with a request for the usage, whatever else is given', () => {
    expect(parseCommandLine(['--help'], specs)).to.deep.equal({ help: true });
    expect(parseCommandLine(['-h', '--pace', '3'], specs)).to.deep.equal({ help: true });
  });

  const bad: [string[], string][] = [
    [['--bogus'], "Unknown option '--bogus'"],
    [['-x'], "Unknown option '-x'"],
    [['stray'], "Unexpected argument 'stray'"],
    [['--pace'], "Option '--pace <value>' argument missing"],
    [['--pace', 'abc'], '--pace must be an integer >= 0, got "abc"'],
    [['--pace', '1.5'], '--pace must be an integer >= 0, got "1.5"'],
    [['--pace=-1'], '--pace must be an integer >= 0, got "-1"'],
    [['--pace', '99999999999999999999'], '--pace must be an integer >= 0, got "99999999999999999999"'],
    [['--step-timeout', '0'], '--step-timeout must be an integer >= 1, got "0"'],
    [['--log-format', 'fancy'], '--log-format must be one of json, pretty, got "fancy"'],
    [['--kubeconfig='], '--kubeconfig needs a value'],
    [['--verbose=yes'], "Option '--verbose' does not take an argument"],
  ];
  for (const [argv, message] of bad) {
    it(`rejects ${argv.join(' ')} with a UsageError naming it`, () => {
      expect(() => parseCommandLine(argv, specs)).to.throw(UsageError, message);
    });
  }

  it('writes a usage text with one aligned line per option and the help switch', () => {
    const text = usageText('prog [options]', 'Does a thing.', specs);
    expect(text.split('\n')).to.deep.equal([
      'usage: prog [options]',
      '',
      'Does a thing.',
      '',
      'options:',
      '  --kubeconfig <path>         the cluster',
      '  --pace <ms>                 pause',
      '  --step-timeout <ms>         step timeout',
      '  --log-format <json|pretty>  format',
      '  --verbose                   say more',
      '  -h, --help                  show this help and exit',
      '',
    ]);
  });
});
