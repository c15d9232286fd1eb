'use strict';
// Mocha's spec output, followed by the one line CI reads: "N passed, N failed".
// Hooks that fail count as failures, so a broken before() can never read as green.
const Mocha = require('mocha');
const { Spec } = Mocha.reporters;
const { EVENT_RUN_END } = Mocha.Runner.constants;

class TotalsReporter extends Spec {
  constructor(runner, options) {
    super(runner, options);
    runner.once(EVENT_RUN_END, () => {
      const { passes, failures } = runner.stats;
      process.stdout.write(`\n${passes} passed, ${failures} failed\n`);
    });
  }
}

module.exports = TotalsReporter;
