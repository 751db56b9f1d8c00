// mocha's spec reporter, and how long each spec file's top-level suites took from start to end,
// appended as JSON lines ({"file", "ms"}) to the file RAILGATE_TEST_TIMES names: the lane
// scripts print the slowest files from it (node dist/test/lanes-cli.js slowest). CommonJS, as
// mocha loads reporters with require.
const { appendFileSync } = require("node:fs");
const Mocha = require("mocha");

const { EVENT_SUITE_BEGIN, EVENT_SUITE_END } = Mocha.Runner.constants;

class FileTimes extends Mocha.reporters.Spec {
  constructor(runner, options) {
    super(runner, options);
    const out = process.env.RAILGATE_TEST_TIMES;
    const started = new Map();
    runner.on(EVENT_SUITE_BEGIN, (suite) => {
      if (suite.parent?.root && suite.file) started.set(suite, Date.now());
    });
    runner.on(EVENT_SUITE_END, (suite) => {
      const start = started.get(suite);
      if (start === undefined || !out) return;
      appendFileSync(out, `${JSON.stringify({ file: suite.file, ms: Date.now() - start })}\n`);
    });
  }
}

module.exports = FileTimes;
