'use strict';
// Mocha's spec output, followed by the one line CI reads: "N passed, N failed",
// and ", N skipped" after it when any test was pending (it.skip, describe.skip,
// this.skip()), so that a part of the suite left out never goes unsaid.
// Hooks that fail count as failures, so a broken before() can never read as green.
const Mocha = require('mocha');
const { Spec } = Mocha.reporters;
const { EVENT_RUN_END } = Mocha.Runner.constants;

/** "N passed, N failed", with ", N skipped" only when something was pending. */
function totalsLine({ passes, failures, pending }) {
  return `${passes} passed, ${failures} failed${pending > 0 ? `, ${pending} skipped` : ''}`;
}

class TotalsReporter extends Spec {
  constructor(runner, options) {
    super(runner, options);
    runner.once(EVENT_RUN_END, () => {
      process.stdout.write(`\n${totalsLine(runner.stats)}\n`);
    });
  }
}

module.exports = TotalsReporter;
module.exports.totalsLine = totalsLine;
